#pragma once
// An output stream that starts every line it writes with a fixed prefix
// (after a '\n', and after the '\r' that redraws a live status line): how a
// run that evaluates kernels without a sandbox says so on every line.

#include <ostream>
#include <streambuf>
#include <string>

namespace kestrel {

class LinePrefixBuffer : public std::streambuf {
 public:
  LinePrefixBuffer(std::ostream& out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    const char c = traits_type::to_char_type(ch);
    if (at_line_start_ && c != '\n' && c != '\r') out_ << prefix_;
    out_.put(c);
    at_line_start_ = c == '\n' || c == '\r';
    return ch;
  }
  int sync() override {
    out_.flush();
    return out_ ? 0 : -1;
  }

 private:
  std::ostream& out_;
  std::string prefix_;
  bool at_line_start_ = true;
};

class LinePrefixStream : public std::ostream {
 public:
  LinePrefixStream(std::ostream& out, std::string prefix) : std::ostream(nullptr), buffer_(out, std::move(prefix)) {
    rdbuf(&buffer_);
  }

 private:
  LinePrefixBuffer buffer_;
};

}  // namespace kestrel
