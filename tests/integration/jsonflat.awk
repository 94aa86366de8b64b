# jsonflat.awk: flatten one JSON document (read from stdin, any layout) into
# lines "PATH<TAB>VALUE", e.g.
#   reportVersion	1
#   layers[0].layer	namespace.net
#   layers[0].applied	true
#   [2].id	c1              (top-level array)
# Strings are unescaped (\n and \t are kept escaped so that a value stays on
# one line); empty objects / arrays print "{}" / "[]".  On a syntax error it
# prints "jsonflat: ..." to stderr and exits 1.
# Only for test assertions: no python3 needed.

function fail(msg) {
  printf "jsonflat: %s at offset %d\n", msg, pos > "/dev/stderr"
  err = 1
  exit 1
}
function ws() {
  while (pos <= n && index(" \t\n\r", substr(s, pos, 1)) > 0)
    pos++
}
function peek() { ws(); return substr(s, pos, 1) }
function emit(path, v) { printf "%s\t%s\n", path, v }
function parse_string(   out, c, e, hex) {
  if (substr(s, pos, 1) != "\"") fail("expected string")
  pos++
  out = ""
  while (pos <= n) {
    c = substr(s, pos, 1)
    if (c == "\"") { pos++; return out }
    if (c == "\\") {
      e = substr(s, pos + 1, 1)
      if (e == "n") out = out "\\n"
      else if (e == "t") out = out "\\t"
      else if (e == "r") out = out "\\r"
      else if (e == "b" || e == "f") out = out
      else if (e == "u") { hex = substr(s, pos + 2, 4); out = out "\\u" hex; pos += 4 }
      else out = out e
      pos += 2
      continue
    }
    out = out c
    pos++
  }
  fail("unterminated string")
}
function parse_value(path,   c, v, i, k, m) {
  c = peek()
  if (c == "{") {
    pos++
    if (peek() == "}") { pos++; emit(path, "{}"); return }
    while (1) {
      ws()
      k = parse_string()
      if (peek() != ":") fail("expected ':'")
      pos++
      parse_value(path == "" ? k : path "." k)
      c = peek()
      if (c == ",") { pos++; continue }
      if (c == "}") { pos++; return }
      fail("expected ',' or '}'")
    }
  }
  if (c == "[") {
    pos++
    if (peek() == "]") { pos++; emit(path, "[]"); return }
    i = 0
    while (1) {
      parse_value(path "[" i "]")
      i++
      c = peek()
      if (c == ",") { pos++; continue }
      if (c == "]") { pos++; return }
      fail("expected ',' or ']'")
    }
  }
  if (c == "\"") { v = parse_string(); emit(path, v); return }
  if (match(substr(s, pos), /^(true|false|null|-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)/)) {
    v = substr(s, pos, RLENGTH)
    pos += RLENGTH
    emit(path, v)
    return
  }
  fail("unexpected character '" c "'")
}
{ s = s $0 "\n" }
END {
  if (err) exit 1
  n = length(s)
  pos = 1
  if (peek() == "") { pos = 0; fail("empty input") }
  parse_value("")
  if (peek() != "") fail("trailing data")
}
