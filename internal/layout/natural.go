// SPDX-License-Identifier: Apache-2.0

package layout

// naturalCompare orders names as a person reads them: runs of digits by
// their value, so svc2 comes before svc10; otherwise byte by byte. Equal
// values with different digits ("a01", "a1") fall back to the bytes, so
// the order stays total and the output deterministic.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			x, y := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(x) != len(y) {
				return len(x) - len(y)
			}
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
			continue
		}
		if a[i] != b[j] {
			return int(a[i]) - int(b[j])
		}
		i++
		j++
	}
	if n := (len(a) - i) - (len(b) - j); n != 0 {
		return n
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
