// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// ANSI colours of a unified diff on a terminal, as git diff has them.
const (
	ansiBold  = "\x1b[1m"
	ansiCyan  = "\x1b[36m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiReset = "\x1b[m"
)

// colours reports whether w is a terminal that wants colours: not when
// NO_COLOR is set (https://no-color.org) or TERM is dumb, never in a file
// or a pipe, where the patch must stay one git apply takes.
func colours(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	if _, set := os.LookupEnv("NO_COLOR"); set || os.Getenv("TERM") == "dumb" {
		return false
	}
	return true
}

// writePatch writes a unified diff to w, coloured when w is a terminal
// that wants colours.
func writePatch(w io.Writer, patch string) {
	if !colours(w) {
		io.WriteString(w, patch)
		return
	}
	io.WriteString(w, colourPatch(patch))
}

// colourPatch colours a unified diff's lines: file headers bold, hunk
// headers cyan, removals red, additions green.
func colourPatch(patch string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(patch, "\n") {
		body := strings.TrimSuffix(line, "\n")
		colour := ""
		switch {
		case body == "":
		case strings.HasPrefix(body, "--- "), strings.HasPrefix(body, "+++ "):
			colour = ansiBold
		case strings.HasPrefix(body, "@@"):
			colour = ansiCyan
		case body[0] == '-':
			colour = ansiRed
		case body[0] == '+':
			colour = ansiGreen
		}
		if colour == "" {
			b.WriteString(line)
			continue
		}
		b.WriteString(colour + body + ansiReset + line[len(body):])
	}
	return b.String()
}
