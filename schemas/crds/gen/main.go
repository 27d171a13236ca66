// SPDX-License-Identifier: Apache-2.0

// Command gen copies the Gateway API CRDs mcs-gitops installs from the
// sigs.k8s.io/gateway-api module in go.mod into schemas/crds/gatewayapi, so
// they can be embedded: that module, unlike mcs-api, has no Go package
// embedding its CRDs. Run through `go generate ./schemas/...`; a test fails
// when the copies differ from the module, so a module bump is the only way
// they change.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run takes the module, the directory in it and the files to copy as
// arguments (see the go:generate line in gateway.go): importing the crds
// package here would need the very files this writes.
func run() error {
	if len(os.Args) < 4 {
		return fmt.Errorf("usage: gen <module> <dir in module> <file>...")
	}
	module, dir, files := os.Args[1], os.Args[2], os.Args[3:]
	out, err := exec.Command("go", "list", "-m", "-json", module).Output()
	if err != nil {
		return fmt.Errorf("go list -m %s: %w", module, err)
	}
	var mod struct{ Dir, Version string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return err
	}
	if mod.Dir == "" {
		return fmt.Errorf("%s is not downloaded; run go mod download", module)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(mod.Dir, dir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join("gatewayapi", f), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("copied %d CRDs from %s %s\n", len(files), module, mod.Version)
	return nil
}
