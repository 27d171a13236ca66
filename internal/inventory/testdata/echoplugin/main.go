// SPDX-License-Identifier: Apache-2.0

// Command echoplugin is a client-go exec credential plugin for tests: its
// token encodes what it was given, so a test server can check that the
// rest.Config really passed the cluster info, args and env.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type execInfo struct {
	APIVersion string `json:"apiVersion"`
	Spec       struct {
		Cluster *struct {
			Server        string          `json:"server"`
			TLSServerName string          `json:"tls-server-name"`
			Config        json.RawMessage `json:"config"`
		} `json:"cluster"`
		Interactive bool `json:"interactive"`
	} `json:"spec"`
}

// Seen is what the token encodes.
type Seen struct {
	APIVersion    string          `json:"apiVersion"`
	Server        string          `json:"server"`
	TLSServerName string          `json:"tlsServerName"`
	Config        json.RawMessage `json:"config,omitempty"`
	Interactive   bool            `json:"interactive"`
	Args          []string        `json:"args"`
	Env           []string        `json:"env"`
}

func main() {
	var in execInfo
	if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &in); err != nil {
		fmt.Fprintln(os.Stderr, "echoplugin: KUBERNETES_EXEC_INFO:", err)
		os.Exit(1)
	}
	seen := Seen{APIVersion: in.APIVersion, Interactive: in.Spec.Interactive, Args: os.Args[1:]}
	if c := in.Spec.Cluster; c != nil {
		seen.Server, seen.TLSServerName, seen.Config = c.Server, c.TLSServerName, c.Config
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ECHO_") {
			seen.Env = append(seen.Env, kv)
		}
	}
	sort.Strings(seen.Env)
	b, err := json.Marshal(seen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoplugin:", err)
		os.Exit(1)
	}
	out := map[string]any{
		"apiVersion": in.APIVersion,
		"kind":       "ExecCredential",
		"status":     map[string]any{"token": "echo." + base64.RawURLEncoding.EncodeToString(b)},
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
