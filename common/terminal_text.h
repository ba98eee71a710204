// Text that came from an input (event logs, file names, collapsed stacks) on its way to a
// terminal, stderr, or a text or Markdown report. One place decides what is safe to show.
//
// A terminal acts on more than the ASCII controls: C1 controls (U+0080..U+009F; U+009B is CSI,
// which starts an escape sequence just like ESC [) and, in an editor or a review tool, the
// bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069; "Trojan Source") that
// make text display in another order than it reads. Invalid UTF-8 is not text at all.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sparkprof {

// Replaces every C0 control (including newline and tab), DEL, C1 control, bidirectional
// control (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), line or paragraph separator
// (U+2028, U+2029) and every byte of invalid UTF-8 with `replacement`; everything else is kept.
std::string SanitizeForTerminal(std::string_view text, std::string_view replacement = "?");

// True when SanitizeForTerminal would replace the code point `code_point`.
bool IsUnsafeForTerminal(char32_t code_point);

// The length in bytes of the longest prefix of `text` with at most `max_characters` characters
// (code points; an invalid byte counts as one) and never ending inside a UTF-8 sequence.
size_t Utf8PrefixBytes(std::string_view text, size_t max_characters);

// The largest n <= max_bytes such that text.substr(0, n) does not end inside a UTF-8 sequence:
// for limits counted in bytes (memory), so a cut string stays valid UTF-8.
size_t Utf8CutBytes(std::string_view text, size_t max_bytes);

// The number of characters (code points; an invalid byte counts as one) in `text`.
size_t Utf8Length(std::string_view text);

// Sanitised and cut to at most `max_characters` characters (by character, never inside one);
// `ellipsis` is appended when something was cut.
std::string TerminalSafeShortened(std::string_view text, size_t max_characters,
                                  std::string_view ellipsis = "...",
                                  std::string_view replacement = "?");

// Length of the valid UTF-8 sequence starting at text[i] (1..4), or 0 when it is invalid
// (overlong, surrogate, past U+10FFFF, cut short). Stores the code point when valid.
size_t DecodeUtf8(std::string_view text, size_t i, char32_t* code_point);

}  // namespace sparkprof
