# Included by agents/CMakeLists.txt: embeds the .cuh files of this folder into stitch_agents at build
# time (EmbedCuda.cmake), so a change to one rebuilds one generated file, and a new one is picked up.
file(GLOB STITCH_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cuh)
set(STITCH_EMBEDDED_CUDA ${CMAKE_CURRENT_BINARY_DIR}/builtin/cuda/EmbeddedCuda.cpp)
add_custom_command(OUTPUT ${STITCH_EMBEDDED_CUDA}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR} -DOUTPUT=${STITCH_EMBEDDED_CUDA}
          -P ${CMAKE_CURRENT_LIST_DIR}/EmbedCuda.cmake
  DEPENDS ${STITCH_CUDA_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/EmbedCuda.cmake
  COMMENT "Embedding the CUDA sources of generated programs"
  VERBATIM)
target_sources(stitch_agents PRIVATE ${STITCH_EMBEDDED_CUDA})
