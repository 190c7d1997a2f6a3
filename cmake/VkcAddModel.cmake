# vkc_add_model(<target> MODEL file.onnx OUTPUT file.pte [OPTIONS ...] [QUANTIZE recipe] [DEVICE profile])
#
# Compiles an ONNX model into an ExecuTorch .pte at build time with the vkc tool (vkc::vkc).
#   MODEL     the .onnx file (relative paths: to CMAKE_CURRENT_SOURCE_DIR)
#   OUTPUT    the .pte to write (relative paths: to CMAKE_CURRENT_BINARY_DIR)
#   OPTIONS   further `vkc compile` arguments, e.g. --input-shape image=1x3x224x224 --force-fp16
#   QUANTIZE  passed as --quantize RECIPE; DEVICE passed as --device NAME. vkc rejects both
#             until quantization and device profiles land.
# If <target> exists, it is made to depend on the compile; otherwise <target> is created as a
# custom target built by `all`. The compile re-runs only when the model, the options or the vkc
# executable change; a failing compile fails the build with vkc's diagnostics and leaves no
# partial .pte. The output path is appended to <target>'s VKC_MODEL_OUTPUTS property.
include_guard(GLOBAL)

function(vkc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;OUTPUT;QUANTIZE;DEVICE" "OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "vkc_add_model: unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL OR NOT ARG_OUTPUT)
    message(FATAL_ERROR "vkc_add_model(${target}): MODEL and OUTPUT are required")
  endif()
  if(NOT TARGET vkc::vkc)
    message(FATAL_ERROR "vkc_add_model: the vkc::vkc executable target is missing (find_package(vkc CONFIG))")
  endif()
  get_filename_component(model ${ARG_MODEL} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(output ${ARG_OUTPUT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  set(args ${ARG_OPTIONS})
  if(DEFINED ARG_QUANTIZE)
    list(APPEND args --quantize ${ARG_QUANTIZE})
  endif()
  if(DEFINED ARG_DEVICE)
    list(APPEND args --device ${ARG_DEVICE})
  endif()

  # A stamp of the command line, rewritten only when it changes, so new options re-run the compile.
  string(MAKE_C_IDENTIFIER "${output}" stamp_name)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/vkc_add_model/${stamp_name}.options)
  list(JOIN args "\n" stamp_text)
  file(CONFIGURE OUTPUT ${stamp} CONTENT "${model}\n${stamp_text}\n" @ONLY)

  get_filename_component(output_dir ${output} DIRECTORY)
  file(MAKE_DIRECTORY ${output_dir})
  file(RELATIVE_PATH shown ${CMAKE_BINARY_DIR} ${output})
  add_custom_command(
    OUTPUT ${output}
    COMMAND vkc::vkc compile ${model} -o ${output} ${args}
    DEPENDS ${model} ${stamp} $<TARGET_FILE:vkc::vkc>
    COMMENT "vkc: compiling ${ARG_MODEL} -> ${shown}"
    VERBATIM)

  string(MAKE_C_IDENTIFIER "${shown}" suffix)
  if(TARGET ${target})
    add_custom_target(${target}_vkc_${suffix} DEPENDS ${output})
    add_dependencies(${target} ${target}_vkc_${suffix})
  else()
    add_custom_target(${target} ALL DEPENDS ${output})
  endif()
  set_property(TARGET ${target} APPEND PROPERTY VKC_MODEL_OUTPUTS ${output})
endfunction()
