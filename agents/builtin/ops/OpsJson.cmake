# The registry's operator list as the harness reads it (harness/stitchcuda_harness/ops.json), written
# by every build from the registry itself. The file stays committed in the harness because the harness
# runs where no build is: a checkout's harness tests, the .vsix (extension/package.mjs copies harness/
# as it is), a machine given a prebuilt host. The build rewrites it only when the list changes, so a
# changed operator shows in `git diff` beside its entry; builtin_ops_on_cpu fails on a stale file.
add_executable(stitch_ops_json ${CMAKE_CURRENT_LIST_DIR}/ExportOps.cpp)
target_link_libraries(stitch_ops_json PRIVATE stitch_agents)
set(STITCH_OPS_JSON ${PROJECT_SOURCE_DIR}/harness/stitchcuda_harness/ops.json)
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/ops.json
  COMMAND stitch_ops_json ${CMAKE_CURRENT_BINARY_DIR}/ops.json
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_CURRENT_BINARY_DIR}/ops.json ${STITCH_OPS_JSON}
  DEPENDS stitch_ops_json
  COMMENT "Exporting the operator registry to harness/stitchcuda_harness/ops.json")
add_custom_target(ops_json ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/ops.json)
