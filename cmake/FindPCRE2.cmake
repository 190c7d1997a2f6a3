# FindPCRE2: PCRE2's 8-bit library (Debian: libpcre2-dev), the tokenizers' pre-tokenizer patterns
# (Unicode properties): the imported target PCRE2::PCRE2.
include(${CMAKE_CURRENT_LIST_DIR}/VkcFindLibrary.cmake)
vkc_find_library(PCRE2 PCRE2::PCRE2 pcre2.h pcre2-8)
