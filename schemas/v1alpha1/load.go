// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// LoadFile reads, strictly decodes, defaults and validates a clusterset.yaml.
func LoadFile(path string) (*ClusterSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ClusterSet config: %w", err)
	}
	return Parse(path, data)
}

// Parse strictly decodes, defaults and validates a ClusterSet. file is only
// used in error messages. Errors never echo a value that looks like a
// credential.
func Parse(file string, data []byte) (*ClusterSet, error) {
	var doc yamlv3.Node
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &FieldError{File: file, Msg: "not valid YAML: " + yamlMessage(err)}
	}
	var extra yamlv3.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &FieldError{File: file, Line: extra.Line, Msg: "more than one YAML document; a ClusterSet config holds exactly one"}
	}
	root := &doc
	if root.Kind == yamlv3.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yamlv3.MappingNode {
		return nil, &FieldError{File: file, Line: root.Line, Msg: "expected a YAML mapping (apiVersion, kind, metadata, spec)"}
	}

	var errs ErrorList
	checkNode(file, root, reflect.TypeOf(ClusterSet{}), "", &errs)
	if len(errs) > 0 {
		return nil, errs
	}

	// The structure is known to match the types now, so decoding through
	// JSON cannot hit an unknown field; it only converts scalars.
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, &FieldError{File: file, Msg: "not valid YAML: " + err.Error()}
	}
	cs := &ClusterSet{}
	jd := json.NewDecoder(bytes.NewReader(js))
	jd.DisallowUnknownFields()
	if err := jd.Decode(cs); err != nil {
		return nil, &FieldError{File: file, Msg: err.Error()}
	}
	cs.Default()
	if verrs := cs.validate(); len(verrs) > 0 {
		for _, e := range verrs {
			e.File = file
			e.Line = lineOf(root, e.Field)
		}
		return nil, verrs
	}
	return cs, nil
}

func yamlMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// credentialKeys are kubeconfig and token fields someone might paste into
// the config. They get their own message because the file goes to Git.
var credentialKeys = map[string]bool{
	"token": true, "bearertoken": true, "password": true, "client-key-data": true,
	"client-certificate-data": true, "clientkeydata": true, "kubeconfigdata": true,
	"privatekey": true, "private-key": true,
}

var publicKeyType = reflect.TypeOf(PublicKey(""))

const credentialAdvice = "looks like a credential; clusterset.yaml is committed to Git, so reference a kubeconfig file (kubeconfig.path) or a Secret (kubeconfig.secretRef) instead"

// looksLikeCredential reports whether a scalar value is key material, a
// token (alone or as a URL's user) or a kubeconfig pasted inline.
func looksLikeCredential(v string) bool {
	return strings.Contains(v, "-----BEGIN") ||
		strings.Contains(v, "client-key-data") ||
		strings.Contains(v, "client-certificate-data") ||
		strings.Contains(v, "token:") ||
		(strings.Contains(v, "clusters:") && strings.Contains(v, "users:")) ||
		redact.TokenShaped(v) || redact.URLUserIsToken(v)
}

// checkNode walks the YAML tree against the Go type, so every unknown field,
// duplicate key and wrongly-typed scalar is reported with its line.
func checkNode(file string, n *yamlv3.Node, t reflect.Type, path string, errs *ErrorList) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	add := func(line int, field, msg string) {
		*errs = append(*errs, &FieldError{File: file, Line: line, Field: field, Msg: msg})
	}
	if n.Kind == yamlv3.AliasNode {
		n = n.Alias
	}
	if n.Kind == yamlv3.ScalarNode && n.Tag == "!!null" {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			add(n.Line, path, "expected a mapping")
			return
		}
		fields := jsonFields(t)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			fp := joinPath(path, k.Value)
			if first, dup := seen[k.Value]; dup {
				add(k.Line, fp, fmt.Sprintf("duplicate key (first at line %d)", first))
				continue
			}
			seen[k.Value] = k.Line
			f, ok := fields[k.Value]
			if !ok {
				if credentialKeys[strings.ToLower(k.Value)] {
					add(k.Line, fp, credentialAdvice)
				} else {
					add(k.Line, fp, "unknown field"+suggest(k.Value, fields))
				}
				continue
			}
			checkNode(file, v, f.Type, fp, errs)
		}
	case reflect.Slice:
		if n.Kind != yamlv3.SequenceNode {
			add(n.Line, path, "expected a list")
			return
		}
		for i, c := range n.Content {
			checkNode(file, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			add(n.Line, path, "expected a mapping")
		}
	case reflect.String:
		if n.Kind != yamlv3.ScalarNode {
			add(n.Line, path, "expected a string")
			return
		}
		if t == publicKeyType {
			// Public key material is meant to be inline; a private key
			// pasted there is not.
			if strings.Contains(n.Value, "PRIVATE KEY") {
				add(n.Line, path, "is a private key; clusterset.yaml is committed to Git, so put it in a Secret or file and reference it from spec.git.signing.key, and write only the public key here")
			}
			return
		}
		if looksLikeCredential(n.Value) {
			add(n.Line, path, credentialAdvice)
		}
	case reflect.Bool:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!bool" {
			add(n.Line, path, "expected true or false")
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			add(n.Line, path, "expected an integer")
			return
		}
		if _, err := strconv.ParseInt(n.Value, 0, t.Bits()); err != nil {
			add(n.Line, path, "integer out of range")
		}
	}
}

func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = f
		}
	}
	return out
}

// suggest names a known field that differs from an unknown one only in case,
// the most common typo in hand-written YAML.
func suggest(key string, fields map[string]reflect.StructField) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf(" (did you mean %q?)", name)
		}
	}
	return ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// lineOf finds the line of a field path like spec.members[1].name in the
// YAML tree, or of its closest existing parent.
func lineOf(root *yamlv3.Node, path string) int {
	n := root
	line := root.Line
	for _, seg := range splitPath(path) {
		var next *yamlv3.Node
		switch n.Kind {
		case yamlv3.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		case yamlv3.SequenceNode:
			if idx, err := strconv.Atoi(seg); err == nil && idx >= 0 && idx < len(n.Content) {
				next = n.Content[idx]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func splitPath(path string) []string {
	var segs []string
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			segs = append(segs, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			segs = append(segs, idx)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return segs
}
