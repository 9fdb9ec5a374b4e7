package source

// Lines splits src the way gopher-lua's scanner counts lines: "\n",
// "\r", "\r\n" and "\n\r" each end one line. Line numbers and columns in
// diagnostics then agree with the parser's.
func Lines(src []byte) []string {
	var lines []string
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\n' && c != '\r' {
			continue
		}
		lines = append(lines, string(src[start:i]))
		if i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r') && src[i+1] != c {
			i++
		}
		start = i + 1
	}
	return append(lines, string(src[start:]))
}
