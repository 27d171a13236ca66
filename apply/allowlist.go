package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// allowed are the kinds a member directory may hold, by group and kind
// (any served version). Everything else is refused before anything is
// applied: a commit cannot create a ClusterRole just because someone put
// one under clusters/<member>/.
var allowed = map[schema.GroupKind]bool{
	{Group: "multicluster.x-k8s.io", Kind: "ServiceImport"}: true,
	{Group: "", Kind: "Service"}:                            true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:      true,
	{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}: true,
	{Group: "gateway.networking.k8s.io", Kind: "TCPRoute"}:  true,
	// One per exported service with TCP ports: its listeners on the
	// member's Gateway, without editing the user's Gateway itself.
	{Group: "gateway.networking.k8s.io", Kind: "ListenerSet"}: true,
	// Where the implementation has no ListenerSet (tcpListeners: Gateway),
	// those listeners merged into the member's own Gateway; the contract
	// refuses any other Gateway or shape, and gateway.go says how it is
	// applied: never created, labelled or pruned.
	gatewayGK:   true,
	namespaceGK: true, // create only, never pruned
}

var namespaceGK = schema.GroupKind{Group: "", Kind: "Namespace"}

// prunable are the allowed kinds prune looks at: all but Namespace and
// Gateway, which are the user's.
func prunable() []schema.GroupKind {
	var out []schema.GroupKind
	for gk := range allowed {
		if gk != namespaceGK && gk != gatewayGK {
			out = append(out, gk)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// checkKind says why an object of this apiVersion/kind may not be applied,
// or returns nil.
func checkKind(apiVersion, kind, namespace string) error {
	if apiVersion == "" || kind == "" {
		return errors.New("object has no apiVersion or kind")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: kind}
	if !allowed[gk] {
		return fmt.Errorf("kind %s (%s) is not in the allow-list (ServiceImport, Service, EndpointSlice, HTTPRoute, TCPRoute, ListenerSet, Gateway, Namespace)", kind, apiVersion)
	}
	if gk == namespaceGK {
		if namespace != "" {
			return fmt.Errorf("Namespace with metadata.namespace %q", namespace)
		}
	} else if namespace == "" {
		return fmt.Errorf("%s without metadata.namespace", kind)
	}
	return nil
}

// typeMeta is what the allow-list check reads from each document.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// checkFile checks every YAML document of one manifest file against the
// allow-list; the error names the file, the document and the kind.
func checkFile(name string, data []byte) error {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var node yamlv3.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if len(node.Content) == 0 || node.Content[0].Tag == "!!null" {
			continue // empty document
		}
		doc, err := yamlv3.Marshal(&node)
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		var tm typeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if err := checkKind(tm.APIVersion, tm.Kind, tm.Metadata.Namespace); err != nil {
			return fmt.Errorf("%s: document %d (%s %q): %w", name, i, tm.Kind, tm.Metadata.Name, err)
		}
	}
}

// kustomizationFields are the only fields a member's kustomization.yaml
// may use: the renderer writes nothing else, and generators, patches,
// remote bases, helm charts or plugins would let a commit produce objects
// (or run programs) the allow-list never saw.
var kustomizationFields = map[string]bool{"apiVersion": true, "kind": true, "resources": true}

// checkKustomization checks the member's kustomization.yaml: known fields
// only, and every resource a file inside the member directory.
func checkKustomization(name string, data []byte, exists func(rel string) bool) (resources []string, err error) {
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var fields []string
	for f := range k {
		if !kustomizationFields[f] {
			fields = append(fields, f)
		}
	}
	if len(fields) > 0 {
		slices.Sort(fields)
		return nil, fmt.Errorf("%s: field(s) %s not allowed (only apiVersion, kind, resources)", name, strings.Join(fields, ", "))
	}
	if kind, _ := k["kind"].(string); kind != "" && kind != "Kustomization" {
		return nil, fmt.Errorf("%s: kind %q, want Kustomization", name, kind)
	}
	res, ok := k["resources"].([]any)
	if !ok && k["resources"] != nil {
		return nil, fmt.Errorf("%s: resources is not a list", name)
	}
	for _, r := range res {
		s, ok := r.(string)
		if !ok {
			return nil, fmt.Errorf("%s: resource %v is not a string", name, r)
		}
		if !exists(s) {
			return nil, fmt.Errorf("%s: resource %q is not a file in the member directory", name, s)
		}
		resources = append(resources, s)
	}
	return resources, nil
}
