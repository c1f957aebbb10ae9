# Run at build time (cmake -P, from EmbeddedCuda.cmake): writes OUTPUT, a C++ file with one string
# constant per .cuh file of SOURCE_DIR (kGemm for Gemm.cuh) holding the file's text after its
# "// stitch-embed:" line, the part a generated program holds. The lines above that make the file
# compile on its own; they are not embedded.
file(GLOB sources ${SOURCE_DIR}/*.cuh)
list(SORT sources)
set(marker "\n// stitch-embed:")
set(delimiter "stitchcuda")
set(definitions "")
foreach(source IN LISTS sources)
  file(READ ${source} text)
  string(FIND "${text}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${source}: no line starting with '// stitch-embed:' before the embedded text")
  endif()
  math(EXPR at "${at} + 1")
  string(SUBSTRING "${text}" ${at} -1 text)
  string(FIND "${text}" "\n" eol)
  math(EXPR eol "${eol} + 1")
  string(SUBSTRING "${text}" ${eol} -1 text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${source}: holds )${delimiter}\", which would end its raw string early")
  endif()
  get_filename_component(name ${source} NAME_WE)
  string(APPEND definitions "const char* const k${name} = R\"${delimiter}(${text})${delimiter}\";\n")
endforeach()
file(WRITE ${OUTPUT}
  "// Generated at build time by agents/builtin/cuda/EmbedCuda.cmake from the .cuh files beside it.\n"
  "#include \"agents/builtin/cuda/EmbeddedCuda.h\"\n\n"
  "namespace stitch::agents::builtin::cuda {\n${definitions}}  // namespace stitch::agents::builtin::cuda\n")
