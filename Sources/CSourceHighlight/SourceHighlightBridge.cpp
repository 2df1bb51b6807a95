// The bridge to GNU source-highlight (Debian's libsource-highlight-dev): sitegen's only C++, kept to what
// Swift needs, behind the C functions of CSourceHighlight.h. docs/decisions.md 41c tells why this library.
#include "CSourceHighlight.h"

#include <srchilite/formatter.h>
#include <srchilite/formattermanager.h>
#include <srchilite/langdefmanager.h>
#include <srchilite/langmap.h>
#include <srchilite/regexrulefactory.h>
#include <srchilite/settings.h>
#include <srchilite/sourcehighlighter.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace {

// The library reads language files with flex and bison scanners that keep their state in globals, numbers
// the states it builds with a static counter, and caches the data directory in a static: every load, from
// any highlighter on any thread, is one at a time. Highlighting itself touches only its highlighter's own
// objects.
std::mutex loading;

/// A malloc'd copy of `text`, which C callers free.
char *copyOf(const std::string &text, size_t *length = nullptr) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (copy == nullptr) return nullptr;
    std::memcpy(copy, text.data(), text.size());
    copy[text.size()] = '\0';
    if (length != nullptr) *length = text.size();
    return copy;
}

/// `text` appended to `html` with `&`, `<`, `>` and `"` escaped, as cmark-gfm escapes a code block's text.
void appendEscaped(std::string &html, const std::string &text) {
    for (char character : text) {
        switch (character) {
        case '&': html += "&amp;"; break;
        case '<': html += "&lt;"; break;
        case '>': html += "&gt;"; break;
        case '"': html += "&quot;"; break;
        default: html += character;
        }
    }
}

/// Writes the text of one kind of token into the highlighter's output: escaped, inside a span of its class
/// when it has one.
class SpanFormatter : public srchilite::Formatter {
    std::string &html;
    const std::string opening;

public:
    SpanFormatter(std::string &html, const std::string &className)
        : html(html), opening(className.empty() ? "" : "<span class=\"" + className + "\">") {}

    void format(const std::string &text, const srchilite::FormatterParams *) override {
        if (text.empty()) return;
        if (opening.empty()) return appendEscaped(html, text);
        html += opening;
        appendEscaped(html, text);
        html += "</span>";
    }
};

} // namespace

struct sitegen_highlighter {
    const std::string directory;
    /// What the formatters write a code block into.
    std::string html;
    srchilite::RegexRuleFactory ruleFactory;
    /// The language definitions loaded so far, each built once.
    srchilite::LangDefManager definitions;
    /// Language name (`python`, `py`) to definition file (`python.lang`), from the directory's `lang.map`.
    std::map<std::string, std::string> files;
    srchilite::FormatterManager formatters;

    explicit sitegen_highlighter(const std::string &directory)
        : directory(directory), definitions(&ruleFactory),
          formatters(srchilite::FormatterPtr(new SpanFormatter(html, ""))) {}
};

sitegen_highlighter *sitegen_highlighter_open(const char *data_directory, const char *const *elements,
                                              const char *const *classes, size_t count, char **error) {
    std::lock_guard<std::mutex> lock(loading);
    std::string directory = data_directory != nullptr ? data_directory : srchilite::Settings::retrieveDataDir();
    try {
        auto highlighter = std::make_unique<sitegen_highlighter>(directory);
        srchilite::LangMap map(directory, "lang.map");
        map.open();
        // `txt` maps to the definition that highlights nothing: such a block is left as cmark-gfm writes it.
        for (auto entry = map.begin(); entry != map.end(); ++entry) {
            if (!entry->second.empty() && entry->second != "nohilite.lang") highlighter->files[entry->first] = entry->second;
        }
        if (highlighter->files.empty()) throw std::runtime_error("it names no language");
        for (size_t index = 0; index < count; ++index) {
            highlighter->formatters.addFormatter(elements[index],
                                                 srchilite::FormatterPtr(new SpanFormatter(highlighter->html, classes[index])));
        }
        return highlighter.release();
    } catch (const std::exception &exception) {
        if (error != nullptr) *error = copyOf("cannot read " + directory + "/lang.map (" + exception.what() + ")");
    } catch (...) {
        if (error != nullptr) *error = copyOf("cannot read " + directory + "/lang.map");
    }
    return nullptr;
}

char *sitegen_highlighter_data_directory(const sitegen_highlighter *highlighter) {
    return copyOf(highlighter->directory);
}

char *sitegen_highlighter_language_names(const sitegen_highlighter *highlighter) {
    std::string names;
    for (const auto &entry : highlighter->files) names += entry.first + "\n";
    return copyOf(names);
}

char *sitegen_highlighter_html(sitegen_highlighter *highlighter, const char *language, const char *code,
                               size_t length, size_t *html_length) {
    auto file = highlighter->files.find(language);
    if (file == highlighter->files.end()) return nullptr;
    try {
        srchilite::HighlightStatePtr state;
        {
            std::lock_guard<std::mutex> lock(loading);
            state = highlighter->definitions.getHighlightState(highlighter->directory, file->second);
        }
        // A new one for each block: it carries a multi-line comment's or string's state from line to line.
        srchilite::SourceHighlighter lines(state);
        lines.setFormatterManager(&highlighter->formatters);
        lines.setOptimize(true);
        highlighter->html.clear();
        highlighter->html.reserve(length * 2);
        const char *line = code, *end = code + length;
        while (line < end) {
            const char *newline = static_cast<const char *>(std::memchr(line, '\n', end - line));
            const char *lineEnd = newline != nullptr ? newline : end;
            lines.highlightParagraph(std::string(line, lineEnd));
            if (newline != nullptr) highlighter->html += '\n';
            line = newline != nullptr ? newline + 1 : end;
        }
        return copyOf(highlighter->html, html_length);
    } catch (...) {
        // A definition that does not parse, or a regular expression the library gives up on: the block is
        // left unhighlighted, as for a language it does not know.
        return nullptr;
    }
}

void sitegen_highlighter_close(sitegen_highlighter *highlighter) {
    delete highlighter;
}
