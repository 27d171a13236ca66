// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	mcsv1alpha1 "sigs.k8s.io/mcs-api/pkg/apis/v1alpha1"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

// MaxObjectBytes bounds one object, the same order as etcd's request limit:
// anything bigger is not something a cluster could have returned.
const MaxObjectBytes = 1536 * 1024

// MaxListBytes bounds one List document, as `kubectl get -o yaml` of a
// busy member writes it: each of its items is held to MaxObjectBytes.
const MaxListBytes = 256 << 20

// splitHint is what to do about an object over the limit.
const splitHint = "if this is kubectl output, write the member's snapshot with `mcs-gitops snapshot`, which keeps only what a snapshot reads, or split the file into one document per object"

// looksLikeList reports whether a YAML document's top-level kind is List,
// read from its own line: a List may be larger than an object, and is
// only decoded to check that.
func looksLikeList(body []byte) bool {
	for line := range bytes.Lines(body) {
		if bytes.Equal(bytes.TrimRight(line, " \r\n"), []byte("kind: List")) {
			return true
		}
	}
	return false
}

// ParseError locates a problem in a snapshot file.
type ParseError struct {
	File string
	// Line is the first line of the YAML document, 0 when unknown.
	Line   int
	Object string
	Msg    string
}

func (e *ParseError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Object != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Object, e.Msg)
	}
	return loc + ": " + e.Msg
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type list struct {
	Items []json.RawMessage `json:"items"`
}

type clusterProperty struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Value string `json:"value"`
	} `json:"spec"`
}

// Parse reads one member's snapshot. file is used in errors only. Kinds the
// renderer does not use are ignored, so a whole `kubectl get -A -o yaml` of
// the right resources can be pasted in.
func Parse(member, file string, data []byte) (*Snapshot, error) {
	return parse(member, file, data, false, time.Time{})
}

// ParseStrict is Parse for a snapshot file a person wrote or pasted
// (render, validate): a field of a ServiceExport or GlobalTrafficPolicy
// that mcs-gitops does not know is an error, where Parse, which reads what
// a member's apiserver served (a newer mcs-api may add fields), ignores it.
// What loads but is most likely a mistake goes into the snapshot's
// Warnings: a creationTimestamp after now (the caller's clock: parsing
// reads none), an EndpointSlice that belongs to no Service of the file.
func ParseStrict(member, file string, data []byte, now time.Time) (*Snapshot, error) {
	return parse(member, file, data, true, now)
}

// Source is one file of a member's snapshot.
type Source struct {
	File string
	Data []byte
}

// ParseStrictSources is ParseStrict for a snapshot kept as several files
// (the parts a commit lays out, layout.InputFiles): one snapshot, each
// error and warning naming its file. whole names the snapshot as a whole
// (its directory) for an error that no one file has.
func ParseStrictSources(member, whole string, srcs []Source, now time.Time) (*Snapshot, error) {
	return parseSources(member, whole, srcs, true, now)
}

func parse(member, file string, data []byte, strict bool, now time.Time) (*Snapshot, error) {
	return parseSources(member, file, []Source{{File: file, Data: data}}, strict, now)
}

// ParseManifests reads an application's manifests (plain YAML, several
// files, `kustomize build` output) for a what-if render (Snapshot.With):
// strictly, as a snapshot file, except that objects need no
// creationTimestamp (an object the manifests create is created at now)
// and kinds a snapshot does not read (Deployments, ConfigMaps, ...) are
// skipped. Manifests with none of the kinds it reads are an error: the
// what-if would show nothing.
func ParseManifests(member, whole string, srcs []Source, now time.Time) (*Snapshot, error) {
	p := &parser{s: &Snapshot{Member: member}, seen: map[string]position{}, strict: true, manifests: true, now: now}
	if err := p.read(srcs); err != nil {
		return nil, err
	}
	p.file = whole
	if len(p.s.Namespaces)+len(p.s.Services)+len(p.s.ServiceExports)+len(p.s.GlobalTrafficPolicies) == 0 {
		return nil, p.errorf(0, "", "holds %d object(s), no Namespace, Service, ServiceExport or GlobalTrafficPolicy", p.objects)
	}
	p.s.sort()
	return p.s, nil
}

func (p *parser) read(srcs []Source) error {
	for _, src := range srcs {
		p.file = src.File
		p.files = append(p.files, src.File)
		for _, d := range splitDocuments(src.Data) {
			if len(bytes.TrimSpace(d.body)) == 0 {
				continue
			}
			if err := p.document(d.line, d.body); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseSources(member, whole string, srcs []Source, strict bool, now time.Time) (*Snapshot, error) {
	p := &parser{s: &Snapshot{Member: member}, seen: map[string]position{}, strict: strict, now: now}
	if err := p.read(srcs); err != nil {
		return nil, err
	}
	p.file = whole
	if p.s.empty() {
		// An empty file, or one of only kinds a snapshot does not read,
		// would read as "this member exports nothing" and withdraw its
		// imports everywhere; a real member always has Namespaces.
		what := "holds no Kubernetes object"
		if p.objects > 0 {
			what = fmt.Sprintf("holds %d object(s), none of a kind a snapshot reads", p.objects)
		}
		return nil, p.errorf(0, "", "%s; a member's snapshot lists at least its Namespaces (an empty one would withdraw every export of %s)", what, member)
	}
	if strict {
		p.warnSlicesWithoutService()
		p.s.Warnings = p.sortedWarnings()
	}
	p.s.sort()
	return p.s, nil
}

// position is where an object was read.
type position struct {
	file string
	line int
}

// at says where, for an error about another object in file.
func (pos position) at(file string) string {
	if pos.file == file {
		return fmt.Sprintf("line %d", pos.line)
	}
	return fmt.Sprintf("%s:%d", pos.file, pos.line)
}

// yamlLine is how the YAML decoder names a line, counted from the start of
// the document it was given.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// absoluteLines rewrites the decoder's document-relative line numbers to
// lines of the file, for a document that starts at line start.
func absoluteLines(msg string, start int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(yamlLine.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		return fmt.Sprintf("line %d", n+start-1)
	})
}

type parser struct {
	file string
	s    *Snapshot
	// seen maps kind/namespace/name to where its first document is.
	seen map[string]position
	// files are the files read, in order.
	files []string
	// objects counts the objects read, of any kind.
	objects int
	// inList is set while the items of a List are read.
	inList bool
	// strict refuses unknown fields of the kinds mcs-gitops defines the
	// reading of (strictKinds), and warns.
	strict bool
	// manifests reads an app's manifests (ParseManifests): an object
	// without a creationTimestamp is created at now.
	manifests bool
	// now is the caller's clock, which a creationTimestamp must not be
	// past (strict only).
	now time.Time
	// warnings are strict's, in the order found.
	warnings []warning
}

// strictKinds are the kinds whose every field mcs-gitops reads: a field it
// does not know is a typo in a file, not a newer API to tolerate.
var strictKinds = map[string]bool{"ServiceExport": true, v1alpha1.GlobalTrafficPolicyKind: true}

func (p *parser) errorf(line int, obj, format string, args ...any) error {
	return &ParseError{File: p.file, Line: line, Object: obj, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) document(line int, body []byte) error {
	if len(body) > MaxObjectBytes && (len(body) > MaxListBytes || !looksLikeList(body)) {
		return p.errorf(line, "", "document is %d bytes, over the %d-byte limit for one object (%d for a List); %s", len(body), MaxObjectBytes, MaxListBytes, splitHint)
	}
	js, err := yaml.YAMLToJSON(body)
	if err != nil {
		return p.errorf(line, "", "not valid YAML: %s", absoluteLines(err.Error(), line))
	}
	return p.object(line, js)
}

func (p *parser) object(line int, js []byte) error {
	js = bytes.TrimSpace(js)
	if bytes.Equal(js, []byte("null")) {
		return nil
	}
	if len(js) == 0 || js[0] != '{' {
		return p.errorf(line, "", "expected a Kubernetes object (a mapping with apiVersion and kind)")
	}
	var tm typeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return p.errorf(line, "", "apiVersion/kind: %v", err)
	}
	if tm.Kind == "" || tm.APIVersion == "" {
		return p.errorf(line, "", "object has no apiVersion or kind")
	}
	p.objects++
	group, _, _ := strings.Cut(tm.APIVersion, "/")
	if !strings.Contains(tm.APIVersion, "/") {
		group = ""
	}
	if msg := versionProblem(group, tm.APIVersion, tm.Kind); msg != "" {
		return p.errorf(line, tm.Kind, "%s", msg)
	}
	switch {
	case group == "" && tm.Kind == "List":
		// kubectl never nests Lists, and decoding nested ones re-reads
		// every inner level: quadratic in time and memory.
		if p.inList {
			return p.errorf(line, tm.Kind, "a List inside a List is not supported")
		}
		p.inList = true
		defer func() { p.inList = false }()
		p.objects-- // the List itself is not an object of the snapshot
		var l list
		if err := json.Unmarshal(js, &l); err != nil {
			return p.errorf(line, tm.Kind, "items: %v", err)
		}
		for _, item := range l.Items {
			if len(item) > MaxObjectBytes {
				return p.errorf(line, "", "a List item is %d bytes, over the %d-byte limit for one object; %s", len(item), MaxObjectBytes, splitHint)
			}
			if err := p.object(line, item); err != nil {
				return err
			}
		}
		return nil
	case group == "" && tm.Kind == "Namespace":
		return decodeInto(p, line, tm.Kind, js, &p.s.Namespaces, false)
	case group == "" && tm.Kind == "Service":
		return decodeInto(p, line, tm.Kind, js, &p.s.Services, true)
	case group == networkingv1.GroupName && tm.Kind == "ServiceCIDR":
		if err := decodeInto(p, line, tm.Kind, js, &p.s.ServiceCIDRs, false); err != nil {
			return err
		}
		last := &p.s.ServiceCIDRs[len(p.s.ServiceCIDRs)-1]
		*last = NormalizeServiceCIDR(*last)
		return nil
	case group == discoveryv1.GroupName && tm.Kind == "EndpointSlice":
		return decodeInto(p, line, tm.Kind, js, &p.s.EndpointSlices, true)
	case group == mcsv1alpha1.GroupName && tm.Kind == "ServiceExport":
		return decodeInto(p, line, tm.Kind, js, &p.s.ServiceExports, true)
	case group == v1alpha1.Group && tm.Kind == v1alpha1.GlobalTrafficPolicyKind:
		return p.policy(line, js)
	case group == v1alpha1.Group && tm.Kind == RejectedKind:
		return p.rejected(line, js)
	case group == "about.k8s.io" && tm.Kind == "ClusterProperty":
		return p.clusterProperty(line, js)
	}
	if msg := nearMiss(group, tm.Kind); msg != "" {
		return p.errorf(line, tm.Kind, "%s", msg)
	}
	return nil
}

// clusterProperty reads the two ClusterProperties a snapshot uses, the
// cluster ID and the resolved gateway addresses, and ignores the others.
func (p *parser) clusterProperty(line int, js []byte) error {
	var cp clusterProperty
	if err := json.Unmarshal(js, &cp); err != nil {
		return p.errorf(line, "ClusterProperty", "%v", err)
	}
	ref := "ClusterProperty " + cp.Metadata.Name
	switch cp.Metadata.Name {
	case ClusterIDProperty:
		if p.s.ClusterID != "" {
			return p.errorf(line, ref, "appears twice")
		}
		if cp.Spec.Value == "" {
			return p.errorf(line, ref, "spec.value is empty")
		}
		p.s.ClusterID = cp.Spec.Value
		p.s.ClusterIDAt = fmt.Sprintf("%s:%d", p.file, line)
	case GatewayAddressesProperty:
		if p.s.GatewayAddresses != nil {
			return p.errorf(line, ref, "appears twice")
		}
		addrs, err := parseGatewayAddresses(cp.Spec.Value)
		if err != nil {
			return p.errorf(line, ref, "spec.value: %v", err)
		}
		p.s.GatewayAddresses = addrs
	}
	return nil
}

// named is what every decoded kind offers for identity checks.
type named interface {
	GetName() string
	GetNamespace() string
}

func decodeInto[T any, PT interface {
	*T
	named
	GetCreationTimestamp() metav1.Time
	SetCreationTimestamp(metav1.Time)
}](p *parser, line int, kind string, js []byte, dst *[]T, namespaced bool) error {
	var obj T
	if p.strict && strictKinds[kind] {
		// Case-sensitive, as the apiserver reads it: lbtype is not lbType.
		strictErrs, err := kjson.UnmarshalStrict(js, &obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
		if err != nil {
			return p.errorf(line, kind, "%v", err)
		}
		if len(strictErrs) > 0 {
			msgs := make([]string, len(strictErrs))
			for i, e := range strictErrs {
				msgs[i] = e.Error()
			}
			return p.errorf(line, kind, "%s (a field mcs-gitops does not know; check its spelling)", strings.Join(msgs, "; "))
		}
	} else if err := json.Unmarshal(js, &obj); err != nil {
		return p.errorf(line, kind, "%v", err)
	}
	o := PT(&obj)
	if ts := o.GetCreationTimestamp(); p.manifests && ts.IsZero() {
		o.SetCreationTimestamp(metav1.NewTime(p.now.UTC().Truncate(time.Second)))
	}
	ref := kind + " " + o.GetName()
	if namespaced {
		ref = kind + " " + o.GetNamespace() + "/" + o.GetName()
	}
	if err := validateObject(kind, o, namespaced); err != nil {
		return p.errorf(line, ref, "%v", err)
	}
	if first, dup := p.seen[ref]; dup {
		return p.errorf(line, ref, "duplicate object (first at %s)", first.at(p.file))
	}
	p.seen[ref] = position{p.file, line}
	if p.strict {
		if p.s.Positions == nil {
			p.s.Positions = map[string]Position{}
		}
		p.s.Positions[ref] = Position{File: p.file, Line: line}
	}
	if p.strict {
		p.warnFutureCreation(line, kind, ref, o.GetCreationTimestamp())
	}
	*dst = append(*dst, obj)
	return nil
}

func (s *Snapshot) sort() {
	sort.Slice(s.Namespaces, func(i, j int) bool { return s.Namespaces[i].Name < s.Namespaces[j].Name })
	sortNamespaced(s.ServiceExports)
	sortNamespaced(s.Services)
	sortNamespaced(s.EndpointSlices)
	sortNamespaced(s.GlobalTrafficPolicies)
	sortRejected(s.Rejected)
	sortServiceCIDRs(s.ServiceCIDRs)
}

func sortNamespaced[T any, PT interface {
	*T
	named
}](items []T) {
	sort.Slice(items, func(i, j int) bool {
		a, b := PT(&items[i]), PT(&items[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

type document struct {
	line int
	body []byte
}

// splitDocuments splits a YAML stream into its documents, remembering the
// line each starts on so errors can point at it. It follows the YAML 1.2
// markers rather than decoding the stream twice: a line starting with "---"
// followed by a blank or the line's end begins a document, and whatever
// follows the marker on that line ("--- {a: b}") belongs to it ("--- #
// note" is only a comment); a line starting with "..." so followed ends the
// current one. TestSplitDocumentsAgreesWithYAMLv3 and its fuzz target check
// the documents found against go.yaml.in/yaml/v3's decoder.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data) + 1
		lineEnd := len(data)
		if end >= 0 {
			lineEnd = i + end
			next = lineEnd + 1
		}
		l := data[i:lineEnd]
		switch {
		case isMarker(l, "---"):
			docs = append(docs, document{line: startLine, body: data[start:i]})
			rest := bytes.TrimSpace(l[3:])
			if len(rest) == 0 || rest[0] == '#' {
				start, startLine = min(next, len(data)), line+1
			} else {
				start, startLine = i+3, line
			}
		case isMarker(l, "..."):
			docs = append(docs, document{line: startLine, body: data[start:i]})
			start, startLine = min(next, len(data)), line+1
		}
		i = next
		line++
	}
	if start < len(data) {
		docs = append(docs, document{line: startLine, body: data[start:]})
	}
	return docs
}

// isMarker reports whether line starts with the document marker m followed
// by a blank or nothing, as YAML requires.
func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r'
}
