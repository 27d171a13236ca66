// SPDX-License-Identifier: Apache-2.0 AND MIT

package yamlfast

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file writes YAML from encoding/json output byte for byte as
//
//	sigs.k8s.io/yaml.JSONToYAML (go.yaml.in/yaml/v2 v2.4.x)
//
// does, without its round trip through the YAML parser and reflection,
// which made serializing 80,000 objects take seventy times as long as
// rendering them (39 s against 0.6 s). It covers
// what rendered objects and reports hold: block mappings and sequences,
// empty ones in flow style, strings, integers, booleans and null. Anything
// else (multi-line strings, floats, keys over 128 bytes, characters the
// YAML reader rejects, ...) returns errUnsupported and the caller falls back
// to sigs.k8s.io/yaml, so the output is the library's in every case.
//
// The scalar analysis, style choice and writers are ported from the
// library's emitterc.go (itself ported from libyaml, MIT licensed,
// Copyright (c) 2006 Kirill Simonov) and resolve.go / encode.go / sorter.go
// (Apache-2.0, Copyright 2011-2016 Canonical Ltd.); NOTICE carries both
// notices. Keep them in step with
// the version go.mod selects. FuzzYAML here and layout's FuzzRender compare
// the two paths.

var errUnsupported = errors.New("not covered by the fast YAML writer")

// jsonNode is one JSON value. Strings and numbers point into the JSON text
// unless they had escapes.
type jsonNode struct {
	kind byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	text []byte
	// kids are array items or object members; key is set on members.
	kids []jsonNode
	key  []byte
}

// yamlState is the scratch space of one conversion, reused from one file
// to the next so that serializing tens of thousands of objects allocates
// little besides the results.
type yamlState struct {
	js    bytes.Buffer
	enc   *json.Encoder
	nodes []jsonNode // every container's kids, sized before parsing
	stack []jsonNode // kids of the containers being parsed
	data  []byte
	pos   int
	w     yamlWriter
}

func newYAMLState() *yamlState {
	st := &yamlState{}
	st.enc = json.NewEncoder(&st.js)
	// The JSON is only read back here, where "\u003c" and "<" are the
	// same string; not escaping saves a little.
	st.enc.SetEscapeHTML(false)
	return st
}

var yamlStates = sync.Pool{New: func() any { return newYAMLState() }}

// marshalJSON is json.Marshal into the reused buffer: the Encoder writes
// the same document plus a newline, and fails in the same cases.
func (st *yamlState) marshalJSON(v any) ([]byte, error) {
	st.js.Reset()
	if err := st.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(st.js.Bytes(), []byte("\n")), nil
}

// parseJSON reads what encoding/json wrote: no insignificant whitespace,
// valid UTF-8, escapes only where it puts them.
func (st *yamlState) parseJSON(data []byte) (jsonNode, error) {
	// Every value but the root follows one of these characters, so their
	// count bounds the nodes and st.nodes never moves while parsing.
	bound := 1 + bytes.Count(data, []byte{','}) + bytes.Count(data, []byte{'['}) + bytes.Count(data, []byte{'{'})
	if cap(st.nodes) < bound {
		st.nodes = make([]jsonNode, 0, bound)
	}
	st.nodes = st.nodes[:0]
	st.stack = st.stack[:0]
	st.data, st.pos = data, 0
	n, err := st.value()
	if err != nil {
		return jsonNode{}, err
	}
	if st.pos != len(st.data) {
		return jsonNode{}, errUnsupported
	}
	return n, nil
}

// closeContainer moves the kids parsed since mark from the stack into
// the node arena.
func (st *yamlState) closeContainer(n *jsonNode, mark int) {
	start := len(st.nodes)
	st.nodes = append(st.nodes, st.stack[mark:]...)
	n.kids = st.nodes[start:len(st.nodes):len(st.nodes)]
	st.stack = st.stack[:mark]
}

func (st *yamlState) value() (jsonNode, error) {
	if st.pos >= len(st.data) {
		return jsonNode{}, errUnsupported
	}
	switch c := st.data[st.pos]; c {
	case '{':
		st.pos++
		n := jsonNode{kind: '{'}
		if st.pos < len(st.data) && st.data[st.pos] == '}' {
			st.pos++
			return n, nil
		}
		mark := len(st.stack)
		for {
			if st.pos >= len(st.data) || st.data[st.pos] != '"' {
				return n, errUnsupported
			}
			key, err := st.str()
			if err != nil {
				return n, err
			}
			if st.pos >= len(st.data) || st.data[st.pos] != ':' {
				return n, errUnsupported
			}
			st.pos++
			v, err := st.value()
			if err != nil {
				return n, err
			}
			v.key = key
			st.stack = append(st.stack, v)
			if st.pos >= len(st.data) {
				return n, errUnsupported
			}
			if st.data[st.pos] == '}' {
				st.pos++
				st.closeContainer(&n, mark)
				return n, nil
			}
			if st.data[st.pos] != ',' {
				return n, errUnsupported
			}
			st.pos++
		}
	case '[':
		st.pos++
		n := jsonNode{kind: '['}
		if st.pos < len(st.data) && st.data[st.pos] == ']' {
			st.pos++
			return n, nil
		}
		mark := len(st.stack)
		for {
			v, err := st.value()
			if err != nil {
				return n, err
			}
			st.stack = append(st.stack, v)
			if st.pos >= len(st.data) {
				return n, errUnsupported
			}
			if st.data[st.pos] == ']' {
				st.pos++
				st.closeContainer(&n, mark)
				return n, nil
			}
			if st.data[st.pos] != ',' {
				return n, errUnsupported
			}
			st.pos++
		}
	case '"':
		s, err := st.str()
		return jsonNode{kind: '"', text: s}, err
	case 't':
		return st.literal("true", 't')
	case 'f':
		return st.literal("false", 'f')
	case 'n':
		return st.literal("null", 'n')
	default:
		start := st.pos
		for st.pos < len(st.data) && strings.IndexByte("-+.0123456789eE", st.data[st.pos]) >= 0 {
			st.pos++
		}
		num := st.data[start:st.pos]
		// Only integers that yaml.v2 reads back as the same digits; a
		// float or -0 would be reformatted.
		if !canonicalInt(num) {
			return jsonNode{}, errUnsupported
		}
		return jsonNode{kind: '0', text: num}, nil
	}
}

func canonicalInt(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' || len(b) == 2 && b[0] == '-' && b[1] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil
}

func (st *yamlState) literal(word string, kind byte) (jsonNode, error) {
	if !bytes.HasPrefix(st.data[st.pos:], []byte(word)) {
		return jsonNode{}, errUnsupported
	}
	st.pos += len(word)
	return jsonNode{kind: kind}, nil
}

// str reads a JSON string. Raw characters the YAML reader would reject
// ("control characters are not allowed") are unsupported, so the fallback
// reports the library's error.
func (st *yamlState) str() ([]byte, error) {
	st.pos++ // opening quote
	start := st.pos
	var out []byte // nil until an escape forces a copy
	for st.pos < len(st.data) {
		c := st.data[st.pos]
		switch {
		case c == '"':
			s := st.data[start:st.pos]
			if out != nil {
				s = append(out, s...)
			}
			st.pos++
			return s, nil
		case c == '\\':
			out = append(out, st.data[start:st.pos]...)
			r, n, err := jsonEscape(st.data[st.pos:])
			if err != nil {
				return nil, err
			}
			out = utf8.AppendRune(out, r)
			st.pos += n
			start = st.pos
		case c < 0x20 || c == 0x7f:
			return nil, errUnsupported
		case c < utf8.RuneSelf:
			st.pos++
		default:
			r, n := utf8.DecodeRune(st.data[st.pos:])
			if !yamlReaderAllows(r) || r == utf8.RuneError && n == 1 {
				return nil, errUnsupported
			}
			st.pos += n
		}
	}
	return nil, errUnsupported
}

// yamlReaderAllows is the character set go.yaml.in/yaml/v2's reader
// accepts in its input.
func yamlReaderAllows(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0x7E || r == 0x85 ||
		r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

func jsonEscape(b []byte) (rune, int, error) {
	if len(b) < 2 {
		return 0, 0, errUnsupported
	}
	switch b[1] {
	case '"', '\\':
		return rune(b[1]), 2, nil
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case 'u':
		if len(b) < 6 {
			return 0, 0, errUnsupported
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
		// Surrogates: encoding/json never writes them, and the YAML
		// scanner rejects them.
		if err != nil || v >= 0xD800 && v <= 0xDFFF {
			return 0, 0, errUnsupported
		}
		return rune(v), 6, nil
	}
	return 0, 0, errUnsupported
}

// pruneObject drops what Marshal documents it drops: a null
// metadata.creationTimestamp and a status that holds nothing.
func pruneObject(root *jsonNode) {
	for i := 0; i < len(root.kids); i++ {
		k := &root.kids[i]
		switch string(k.key) {
		case "metadata":
			if k.kind == '{' {
				k.kids = slices.DeleteFunc(k.kids, func(m jsonNode) bool {
					return string(m.key) == "creationTimestamp" && m.kind == 'n'
				})
			}
		case "status":
			if k.kind == '{' && emptyJSON(k) {
				root.kids = slices.Delete(root.kids, i, i+1)
				i--
			}
		}
	}
}

// emptyJSON mirrors isEmpty: null, or an object of empty values.
func emptyJSON(n *jsonNode) bool {
	switch n.kind {
	case 'n':
		return true
	case '{':
		for i := range n.kids {
			if !emptyJSON(&n.kids[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// yamlWriter is the part of yaml.v2's emitter state that decides bytes.
type yamlWriter struct {
	buf        []byte
	column     int
	indent     int
	whitespace bool
	indention  bool
}

const (
	yamlBestIndent = 2
	yamlBestWidth  = 80
	// yamlMaxSimpleKey is the longest key yaml.v2 writes as "key:"; longer
	// ones get the "? key" form, which the fast writer does not do.
	yamlMaxSimpleKey = 128
)

// jsonToYAML converts encoding/json output to YAML exactly as
// sigs.k8s.io/yaml.JSONToYAML does, after prefix, or fails with
// errUnsupported. prune applies Marshal's removals first. The result is a
// new slice of exactly the right size.
func (st *yamlState) jsonToYAML(js []byte, prune bool, prefix string) ([]byte, error) {
	root, err := st.parseJSON(js)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' || len(root.kids) == 0 {
		return nil, errUnsupported
	}
	if prune {
		pruneObject(&root)
		if len(root.kids) == 0 {
			return nil, errUnsupported
		}
	}
	w := &st.w
	*w = yamlWriter{buf: append(w.buf[:0], prefix...), indent: -1, whitespace: true, indention: true}
	if err := w.node(&root, false, false); err != nil {
		return nil, err
	}
	// Document end: yaml_emitter_emit_document_end's write_indent.
	w.writeIndent()
	return bytes.Clone(w.buf), nil
}

func (w *yamlWriter) increaseIndent(flow, indentless bool) {
	if w.indent < 0 {
		if flow {
			w.indent = yamlBestIndent
		} else {
			w.indent = 0
		}
	} else if !indentless {
		w.indent += yamlBestIndent
	}
}

func (w *yamlWriter) put(c byte) {
	w.buf = append(w.buf, c)
	w.column++
}

// writeChar copies one UTF-8 character; the column counts characters.
func (w *yamlWriter) writeChar(v []byte, i *int) {
	n := yamlWidth(v[*i])
	w.buf = append(w.buf, v[*i:*i+n]...)
	w.column++
	*i += n
}

// writeRun copies characters none of which the writers treat specially.
func (w *yamlWriter) writeRun(v []byte) {
	w.buf = append(w.buf, v...)
	w.column += utf8.RuneCount(v)
}

func (w *yamlWriter) writeIndent() {
	indent := max(w.indent, 0)
	if !w.indention || w.column > indent || (w.column == indent && !w.whitespace) {
		w.buf = append(w.buf, '\n')
		w.column = 0
	}
	for w.column < indent {
		w.put(' ')
	}
	w.whitespace = true
	w.indention = true
}

// writeIndicator writes a one-character indicator; the emitter's
// multi-character ones ("...", "!<") never occur here.
func (w *yamlWriter) writeIndicator(indicator byte, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !w.whitespace {
		w.put(' ')
	}
	w.put(indicator)
	w.whitespace = isWhitespace
	w.indention = w.indention && isIndention
}

// node emits one value. mapping and simpleKey are the emitter's
// mapping_context and simple_key_context for it.
func (w *yamlWriter) node(n *jsonNode, mapping, simpleKey bool) error {
	switch n.kind {
	case '{':
		saved := w.indent
		if len(n.kids) == 0 {
			w.writeIndicator('{', true, true, false)
			w.writeIndicator('}', false, false, false)
			return nil
		}
		w.increaseIndent(false, false)
		slices.SortFunc(n.kids, func(a, b jsonNode) int {
			if yamlKeyLess(a.key, b.key) {
				return -1
			}
			if yamlKeyLess(b.key, a.key) {
				return 1
			}
			return 0
		})
		for i := range n.kids {
			k := &n.kids[i]
			if len(k.key) > yamlMaxSimpleKey {
				return errUnsupported
			}
			w.writeIndent()
			if err := w.scalar(k.key, true, true); err != nil {
				return err
			}
			w.writeIndicator(':', false, false, false)
			if err := w.node(k, true, false); err != nil {
				return err
			}
		}
		w.indent = saved
		return nil
	case '[':
		saved := w.indent
		if len(n.kids) == 0 {
			w.writeIndicator('[', true, true, false)
			w.writeIndicator(']', false, false, false)
			return nil
		}
		w.increaseIndent(false, mapping && !w.indention)
		for i := range n.kids {
			w.writeIndent()
			w.writeIndicator('-', true, false, true)
			if err := w.node(&n.kids[i], false, false); err != nil {
				return err
			}
		}
		w.indent = saved
		return nil
	case '"':
		return w.scalar(n.text, true, simpleKey)
	case '0':
		return w.scalar(n.text, false, simpleKey)
	case 't':
		return w.scalar(yamlTrue, false, simpleKey)
	case 'f':
		return w.scalar(yamlFalse, false, simpleKey)
	case 'n':
		return w.scalar(yamlNull, false, simpleKey)
	}
	return errUnsupported
}

var (
	yamlTrue  = []byte("true")
	yamlFalse = []byte("false")
	yamlNull  = []byte("null")
)

// yamlNameByte marks the characters of names, label values and addresses
// (A-Z a-z 0-9 . / _ -). A string of only these is printable, has no
// spaces or line breaks and no indicator past its first character, which
// lets scalar skip the character-by-character analysis.
var yamlNameByte = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./_-") {
		t[c] = true
	}
	return t
}()

func nameOnly(v []byte) bool {
	for _, c := range v {
		if !yamlNameByte[c] {
			return false
		}
	}
	return len(v) > 0
}

type scalarStyle int

const (
	stylePlain scalarStyle = iota
	styleSingle
	styleDouble
)

// scalar emits a scalar as yaml_emitter_emit_scalar does. isString tells
// a string, which encoder.stringv quotes when plain would read back as
// another type, from the integers, booleans and null written plain.
func (w *yamlWriter) scalar(v []byte, isString, simpleKey bool) error {
	name := nameOnly(v)
	style := stylePlain
	if isString {
		if !name && hasBreak(v) {
			// encoder.stringv asks for a literal block; not covered.
			return errUnsupported
		}
		if !plainStringResolves(v) {
			style = styleDouble
		}
	}
	var a scalarAnalysis
	// Among names, only "-" and a "---" or "..." start are indicators.
	if name && !(len(v) == 1 && v[0] == '-') && !bytes.HasPrefix(v, []byte("---")) && !bytes.HasPrefix(v, []byte("...")) {
		a = scalarAnalysis{blockPlainAllowed: true, singleQuotedAllowed: true}
	} else {
		a = analyzeScalar(v)
	}
	if style == stylePlain {
		if !a.blockPlainAllowed {
			style = styleSingle
		}
		if len(v) == 0 && simpleKey {
			style = styleSingle
		}
	}
	if style == styleSingle && !a.singleQuotedAllowed {
		style = styleDouble
	}

	saved := w.indent
	w.increaseIndent(true, false)
	switch style {
	case stylePlain:
		w.writePlain(v, !simpleKey)
	case styleSingle:
		w.writeSingleQuoted(v, !simpleKey)
	default:
		w.writeDoubleQuoted(v, !simpleKey)
	}
	w.indent = saved
	return nil
}

func hasBreak(v []byte) bool {
	for i := 0; i < len(v); i++ {
		if yamlIsBreak(v, i) {
			return true
		}
	}
	return false
}

// yamlWidth is the length of the UTF-8 sequence b starts. The parser
// only lets valid UTF-8 through; 1 for anything else keeps loops moving.
func yamlWidth(b byte) int {
	switch {
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 1
}

func yamlIsBreak(b []byte, i int) bool {
	return b[i] == '\r' || b[i] == '\n' ||
		b[i] == 0xC2 && i+1 < len(b) && b[i+1] == 0x85 ||
		b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9)
}

func yamlIsBlank(b []byte, i int) bool { return b[i] == ' ' || b[i] == '\t' }

func yamlIsBlankz(b []byte, i int) bool {
	return yamlIsBlank(b, i) || yamlIsBreak(b, i) || b[i] == 0
}

func yamlIsPrintable(b []byte, i int) bool {
	at := func(k int) byte {
		if i+k < len(b) {
			return b[i+k]
		}
		return 0
	}
	return b[i] == 0x0A ||
		b[i] >= 0x20 && b[i] <= 0x7E ||
		b[i] == 0xC2 && at(1) >= 0xA0 ||
		b[i] > 0xC2 && b[i] < 0xED ||
		b[i] == 0xED && at(1) < 0xA0 ||
		b[i] == 0xEE ||
		b[i] == 0xEF && !(at(1) == 0xBB && at(2) == 0xBF) && !(at(1) == 0xBF && (at(2) == 0xBE || at(2) == 0xBF))
}

type scalarAnalysis struct {
	blockPlainAllowed   bool
	singleQuotedAllowed bool
}

// analyzeScalar is yaml_emitter_analyze_scalar, reduced to what block
// context reads. Line breaks never get here.
func analyzeScalar(v []byte) scalarAnalysis {
	if len(v) == 0 {
		return scalarAnalysis{blockPlainAllowed: true, singleQuotedAllowed: true}
	}
	var blockIndicators, specialCharacters, leadingSpace, trailingSpace bool
	if len(v) >= 3 && (v[0] == '-' && v[1] == '-' && v[2] == '-' || v[0] == '.' && v[1] == '.' && v[2] == '.') {
		blockIndicators = true
	}
	precededByWhitespace := true
	for i, w := 0, 0; i < len(v); i += w {
		w = yamlWidth(v[i])
		followedByWhitespace := i+w >= len(v) || yamlIsBlank(v, i+w)
		if i == 0 {
			switch v[i] {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				blockIndicators = true
			case '?', ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '-':
				if followedByWhitespace {
					blockIndicators = true
				}
			}
		} else {
			switch v[i] {
			case ':':
				if followedByWhitespace {
					blockIndicators = true
				}
			case '#':
				if precededByWhitespace {
					blockIndicators = true
				}
			}
		}
		if !yamlIsPrintable(v, i) {
			specialCharacters = true
		}
		if v[i] == ' ' {
			if i == 0 {
				leadingSpace = true
			}
			if i+w == len(v) {
				trailingSpace = true
			}
		}
		precededByWhitespace = yamlIsBlankz(v, i)
	}
	a := scalarAnalysis{blockPlainAllowed: true, singleQuotedAllowed: true}
	if leadingSpace || trailingSpace || blockIndicators {
		a.blockPlainAllowed = false
	}
	if specialCharacters {
		a.blockPlainAllowed = false
		a.singleQuotedAllowed = false
	}
	return a
}

func (w *yamlWriter) writePlain(v []byte, allowBreaks bool) {
	if !w.whitespace {
		w.put(' ')
	}
	// A line is only folded at a space past column 80.
	if !allowBreaks || bytes.IndexByte(v, ' ') < 0 || w.column+utf8.RuneCount(v) <= yamlBestWidth {
		w.writeRun(v)
		w.whitespace = false
		w.indention = false
		return
	}
	spaces := false
	for i := 0; i < len(v); {
		if v[i] == ' ' {
			if allowBreaks && !spaces && w.column > yamlBestWidth && !(i+1 < len(v) && v[i+1] == ' ') {
				w.writeIndent()
				i++
			} else {
				w.writeChar(v, &i)
			}
			spaces = true
		} else {
			w.writeChar(v, &i)
			w.indention = false
			spaces = false
		}
	}
	w.whitespace = false
	w.indention = false
}

func (w *yamlWriter) writeSingleQuoted(v []byte, allowBreaks bool) {
	w.writeIndicator('\'', true, false, false)
	spaces := false
	for i := 0; i < len(v); {
		if v[i] == ' ' {
			if allowBreaks && !spaces && w.column > yamlBestWidth && i > 0 && i < len(v)-1 && v[i+1] != ' ' {
				w.writeIndent()
				i++
			} else {
				w.writeChar(v, &i)
			}
			spaces = true
		} else {
			if v[i] == '\'' {
				w.put('\'')
			}
			w.writeChar(v, &i)
			w.indention = false
			spaces = false
		}
	}
	w.writeIndicator('\'', false, false, false)
	w.whitespace = false
	w.indention = false
}

func (w *yamlWriter) writeDoubleQuoted(v []byte, allowBreaks bool) {
	spaces := false
	w.writeIndicator('"', true, false, false)
	// yaml.v2's is_bom looks at the start of the value whatever the
	// index, so a value starting with a BOM has every character escaped.
	bom := len(v) >= 3 && v[0] == 0xEF && v[1] == 0xBB && v[2] == 0xBF
	for i := 0; i < len(v); {
		if !yamlIsPrintable(v, i) || bom || yamlIsBreak(v, i) || v[i] == '"' || v[i] == '\\' {
			r, n := utf8.DecodeRune(v[i:])
			i += n
			w.put('\\')
			switch r {
			case 0x00:
				w.put('0')
			case 0x07:
				w.put('a')
			case 0x08:
				w.put('b')
			case 0x09:
				w.put('t')
			case 0x0A:
				w.put('n')
			case 0x0b:
				w.put('v')
			case 0x0c:
				w.put('f')
			case 0x0d:
				w.put('r')
			case 0x1b:
				w.put('e')
			case 0x22:
				w.put('"')
			case 0x5c:
				w.put('\\')
			case 0x85:
				w.put('N')
			case 0xA0:
				w.put('_')
			case 0x2028:
				w.put('L')
			case 0x2029:
				w.put('P')
			default:
				digits := 8
				switch {
				case r <= 0xFF:
					w.put('x')
					digits = 2
				case r <= 0xFFFF:
					w.put('u')
					digits = 4
				default:
					w.put('U')
				}
				for k := (digits - 1) * 4; k >= 0; k -= 4 {
					d := byte((r >> uint(k)) & 0x0F)
					if d < 10 {
						w.put(d + '0')
					} else {
						w.put(d + 'A' - 10)
					}
				}
			}
			spaces = false
		} else if v[i] == ' ' {
			if allowBreaks && !spaces && w.column > yamlBestWidth && i > 0 && i < len(v)-1 {
				w.writeIndent()
				if v[i+1] == ' ' {
					w.put('\\')
				}
				i++
			} else {
				w.writeChar(v, &i)
			}
			spaces = true
		} else {
			w.writeChar(v, &i)
			spaces = false
		}
	}
	w.writeIndicator('"', false, false, false)
	w.whitespace = false
	w.indention = false
}

// plainStringResolves reports whether yaml.v2 writes the string plain:
// encoder.stringv's resolve("", s) == !!str && !isBase60Float(s).
func plainStringResolves(v []byte) bool {
	if len(v) == 0 {
		return false // resolves to null
	}
	switch c := v[0]; {
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !resolvesAsNumberOrTime(v) && !isBase60Float(v)
	case c == '.':
		if yamlResolveMap[string(v)] {
			return false
		}
		_, err := strconv.ParseFloat(string(v), 64)
		return err != nil
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !yamlResolveMap[string(v)]
	}
	return true
}

// yamlResolveMap holds the words resolve.go maps to bool, null, float and
// merge; all of them are non-strings.
var yamlResolveMap = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
		"<<",
	} {
		m[s] = true
	}
	return m
}()

// resolvesAsNumberOrTime is resolve.go's 'D'/'S' hint branch for an
// unquoted scalar: a map word, timestamp, int, uint, float or binary int.
// It avoids allocating for the common strings that are none of these
// (addresses, names), since it runs for every one of them.
func resolvesAsNumberOrTime(v []byte) bool {
	if yamlResolveMap[string(v)] {
		return true
	}
	if len(v) > 4 && v[4] == '-' && yamlTimestamp(string(v)) {
		return true
	}
	// Every parse below accepts only these characters.
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X' ||
			c == 'o' || c == 'O' || c == '+' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	plain := v
	if bytes.IndexByte(v, '_') >= 0 {
		plain = bytes.ReplaceAll(v, []byte("_"), nil)
	}
	if intCharsOnly(plain) {
		s := string(plain)
		if _, err := strconv.ParseInt(s, 0, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(s, 0, 64); err == nil {
			return true
		}
	}
	if yamlStyleFloat(plain) {
		if _, err := strconv.ParseFloat(string(plain), 64); err == nil {
			return true
		}
	}
	if !intCharsOnly(plain) {
		return false
	}
	if bytes.HasPrefix(plain, []byte("0b")) {
		if _, err := strconv.ParseInt(string(plain[2:]), 2, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(string(plain[2:]), 2, 64); err == nil {
			return true
		}
	} else if bytes.HasPrefix(plain, []byte("-0b")) {
		if _, err := strconv.ParseInt("-"+string(plain[3:]), 2, 64); err == nil {
			return true
		}
	}
	return false
}

func intCharsOnly(s []byte) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' ||
			c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == '+' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// yamlStyleFloat matches resolve.go's
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ without a regexp.
func yamlStyleFloat(s []byte) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

var yamlTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// yamlTimestamp is resolve.go's parseTimestamp.
func yamlTimestamp(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			break
		}
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, format := range yamlTimestampFormats {
		if _, err := time.Parse(format, s); err == nil {
			return true
		}
	}
	return false
}

var yamlBase60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

func isBase60Float(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	c := v[0]
	if !(c == '+' || c == '-' || c >= '0' && c <= '9') || strings.IndexByte(string(v), ':') < 0 {
		return false
	}
	return yamlBase60Float.Match(v)
}

// yamlKeyLess is sorter.go's keyList.Less for two string keys.
func yamlKeyLess(a, b []byte) bool {
	if isASCII(a) && isASCII(b) {
		return naturalLess(a, b)
	}
	return naturalLess([]rune(string(a)), []rune(string(b)))
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func naturalLess[T byte | rune](ar, br []T) bool {
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al := unicode.IsLetter(rune(ar[i]))
		bl := unicode.IsLetter(rune(br[i]))
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(rune(ar[j])); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(rune(ar[ai])); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(rune(br[bi])); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
