// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	sigsjson "sigs.k8s.io/json"
)

// The consumer's provider file of KEP-5339, as sigs.k8s.io/cluster-inventory-api
// v0.1.2 reads it (pkg/access, flag --clusterprofile-provider-file): it maps
// the access provider names a ClusterProfile offers to exec plugins that run
// in our pod. The profile says where a cluster is; only this file says what
// runs on our side.

// ProfileSourcedCLIArgsPolicy says what to do with the arguments a profile
// puts in the ExtensionAdditionalArgs extension.
type ProfileSourcedCLIArgsPolicy string

const (
	// CLIArgsIgnore, also the meaning of "", drops them.
	CLIArgsIgnore ProfileSourcedCLIArgsPolicy = "Ignore"
	// CLIArgsAppend puts them after the file's arguments.
	CLIArgsAppend ProfileSourcedCLIArgsPolicy = "Append"
)

// ProfileSourcedEnvVarsPolicy says what to do with the variables a profile
// puts in the ExtensionAdditionalEnvs extension.
type ProfileSourcedEnvVarsPolicy string

const (
	// EnvVarsIgnore, also the meaning of "", drops them.
	EnvVarsIgnore ProfileSourcedEnvVarsPolicy = "Ignore"
	// EnvVarsAppendIfNotExists adds those the file does not set; the
	// file's value wins.
	EnvVarsAppendIfNotExists ProfileSourcedEnvVarsPolicy = "AppendIfNotExists"
	// EnvVarsReplace adds them all; the profile's value wins.
	EnvVarsReplace ProfileSourcedEnvVarsPolicy = "Replace"
)

// Exec API versions client-go's exec authenticator accepts (v1alpha1 is
// gone from client-go).
const (
	ExecAPIVersionV1      = "client.authentication.k8s.io/v1"
	ExecAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"
)

// ProviderFile is the consumer's provider file.
type ProviderFile struct {
	Providers []Provider `json:"providers"`
}

// Provider maps one access provider name to the exec plugin that gets
// credentials for it.
type Provider struct {
	Name                        string                      `json:"name"`
	ExecConfig                  *clientcmdv1.ExecConfig     `json:"execConfig"`
	ProfileSourcedCLIArgsPolicy ProfileSourcedCLIArgsPolicy `json:"profileSourcedCLIArgsPolicy,omitempty"`
	ProfileSourcedEnvVarsPolicy ProfileSourcedEnvVarsPolicy `json:"profileSourcedEnvVarsPolicy,omitempty"`
}

// LoadProviders reads and parses the provider file at path.
func LoadProviders(path string) (*ProviderFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// The *PathError names the path.
		return nil, fmt.Errorf("provider file: %w", err)
	}
	return ParseProviders(path, data)
}

// ParseProviders parses a provider file; name is how errors call it. All
// problems are reported together so one edit fixes the file. Errors name
// fields and providers but never quote a value: env values and args may be
// credentials.
func ParseProviders(name string, data []byte) (*ProviderFile, error) {
	f := &ProviderFile{}
	// Case-sensitive, unlike encoding/json: "Command" must not pass for
	// "command" in a file whose every other reader is case-sensitive.
	strict, err := sigsjson.UnmarshalStrict(data, f)
	if err != nil {
		return nil, fmt.Errorf("provider file %s: %w", name, describeDecodeError(data))
	}
	var errs []error
	for _, e := range strict {
		// Unknown and duplicate field errors quote the field path, a key
		// and never a value.
		errs = append(errs, fmt.Errorf("provider file %s: %w", name, e))
	}
	errs = append(errs, f.validate(name)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// describeDecodeError rebuilds a fatal decoding error from encoding/json's
// exported error types, in words of our own: the decoders' messages may
// quote a number from the file, and their syntax errors the offending byte.
func describeDecodeError(data []byte) error {
	var probe ProviderFile
	err := json.Unmarshal(data, &probe)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte in.
		at := max(syn.Offset-1, 0)
		line, col := lineCol(data, at)
		return fmt.Errorf("invalid JSON at line %d, column %d (byte offset %d)", line, col, at)
	case errors.As(err, &typ):
		// Value is "string", "number", "number 42", ...: keep the kind only.
		kind, _, _ := strings.Cut(typ.Value, " ")
		// Offset is just past the value.
		line, col := lineCol(data, max(typ.Offset-1, 0))
		field := typ.Field
		if field == "" {
			field = "(top level)"
		}
		return fmt.Errorf("field %s (value ending at line %d, column %d): a JSON %s where %s is expected", field, line, col, kind, typ.Type)
	default:
		// Only the case-sensitive decoder failed; its message is not ours
		// to trust with the file's text.
		return errors.New("does not decode as a provider file")
	}
}

// lineCol turns a byte offset into 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func (f *ProviderFile) validate(file string) []error {
	if len(f.Providers) == 0 {
		return []error{fmt.Errorf("provider file %s: no providers: every cluster would be unreachable", file)}
	}
	var errs []error
	first := map[string]int{}
	for i := range f.Providers {
		p := &f.Providers[i]
		where := fmt.Sprintf("provider file %s: providers[%d] %q", file, i, p.Name)
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is empty", where))
		} else if j, dup := first[p.Name]; dup {
			// Only the first would ever be chosen; the second is a mistake.
			errs = append(errs, fmt.Errorf("%s: name already used by providers[%d]", where, j))
		} else {
			first[p.Name] = i
		}
		for _, err := range p.problems() {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errs
}

// problems are what is wrong with one provider, apart from its name's
// uniqueness; Config checks them again for files built in code.
func (p *Provider) problems() []error {
	var errs []error
	switch p.ProfileSourcedCLIArgsPolicy {
	case "", CLIArgsIgnore, CLIArgsAppend:
	default:
		errs = append(errs, fmt.Errorf("profileSourcedCLIArgsPolicy %q is not %q or %q", p.ProfileSourcedCLIArgsPolicy, CLIArgsIgnore, CLIArgsAppend))
	}
	switch p.ProfileSourcedEnvVarsPolicy {
	case "", EnvVarsIgnore, EnvVarsAppendIfNotExists, EnvVarsReplace:
	default:
		errs = append(errs, fmt.Errorf("profileSourcedEnvVarsPolicy %q is not %q, %q or %q", p.ProfileSourcedEnvVarsPolicy, EnvVarsIgnore, EnvVarsAppendIfNotExists, EnvVarsReplace))
	}
	e := p.ExecConfig
	if e == nil {
		return append(errs, errors.New("execConfig is missing"))
	}
	if strings.TrimSpace(e.Command) == "" {
		errs = append(errs, errors.New("execConfig.command is empty"))
	}
	switch e.APIVersion {
	case "", ExecAPIVersionV1, ExecAPIVersionV1beta1:
	default:
		errs = append(errs, fmt.Errorf("execConfig.apiVersion %q is not %s or %s", e.APIVersion, ExecAPIVersionV1, ExecAPIVersionV1beta1))
	}
	switch e.InteractiveMode {
	case "", clientcmdv1.NeverExecInteractiveMode, clientcmdv1.IfAvailableExecInteractiveMode:
	case clientcmdv1.AlwaysExecInteractiveMode:
		errs = append(errs, errors.New("execConfig.interactiveMode Always: a controller has no terminal, plugins run with interactiveMode Never"))
	default:
		errs = append(errs, fmt.Errorf("execConfig.interactiveMode %q is not Never or IfAvailable", e.InteractiveMode))
	}
	seen := map[string]bool{}
	for k, env := range e.Env {
		switch {
		case env.Name == "":
			errs = append(errs, fmt.Errorf("execConfig.env[%d]: name is empty", k))
		case !validEnvName(env.Name):
			// Not quoted: "TOKEN=abc" in the name field would leak abc.
			errs = append(errs, fmt.Errorf("execConfig.env[%d]: name holds '=' or NUL", k))
		case seen[env.Name]:
			// Which one the plugin sees would depend on the OS.
			errs = append(errs, fmt.Errorf("execConfig.env[%d] %q: set twice", k, env.Name))
		}
		seen[env.Name] = true
	}
	return errs
}

// validEnvName refuses what would corrupt the NAME=value entry the exec
// authenticator builds.
func validEnvName(n string) bool {
	return n != "" && !strings.ContainsAny(n, "=\x00")
}
