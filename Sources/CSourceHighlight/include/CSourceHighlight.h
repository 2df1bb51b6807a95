#ifndef SITEGEN_CSOURCEHIGHLIGHT_H
#define SITEGEN_CSOURCEHIGHLIGHT_H
// A C face on GNU source-highlight (C++), which Swift cannot call directly: open a highlighter on the
// library's language definitions, turn a code block into HTML spans, close it. See SourceHighlightBridge.cpp.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One highlighter: the language map and every language definition it has loaded. Not thread-safe: use one
/// per thread at a time.
typedef struct sitegen_highlighter sitegen_highlighter;

/// Opens a highlighter on the language definitions in `data_directory` (NULL: the library's own, which
/// `SOURCE_HIGHLIGHT_DATADIR` can move). Token elements named in `elements` (`keyword`, `string`, …) are
/// wrapped in `<span class="classes[i]">`; others are written as plain text. NULL when the definitions cannot
/// be read; then `*error` (when `error` is not NULL) is a malloc'd message for the caller to free.
sitegen_highlighter *sitegen_highlighter_open(const char *data_directory, const char *const *elements,
                                              const char *const *classes, size_t count, char **error);

/// The directory the highlighter reads its definitions from, as a malloc'd string for the caller to free.
char *sitegen_highlighter_data_directory(const sitegen_highlighter *highlighter);

/// The language names the highlighter knows (`python`, `sh`, …), one a line, as a malloc'd string to free.
char *sitegen_highlighter_language_names(const sitegen_highlighter *highlighter);

/// `code` (`length` bytes of UTF-8) in `language` as HTML: every character escaped, tokens in spans. A
/// malloc'd string for the caller to free, its length in `*html_length`; NULL when the language is unknown
/// or its definition cannot be read.
char *sitegen_highlighter_html(sitegen_highlighter *highlighter, const char *language, const char *code,
                               size_t length, size_t *html_length);

/// Closes a highlighter.
void sitegen_highlighter_close(sitegen_highlighter *highlighter);

#ifdef __cplusplus
}
#endif
#endif
