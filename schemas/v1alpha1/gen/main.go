// SPDX-License-Identifier: Apache-2.0

// Command gen writes schemas/clusterset.schema.json from the v1alpha1 Go
// types. Run it with `make generate` from the repository root.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcs-gitops/mcs-gitops/schemas/v1alpha1"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	docs, err := v1alpha1.FieldDocs(filepath.Join(root, "schemas", "v1alpha1"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := v1alpha1.JSONSchema(docs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(root, v1alpha1.SchemaFile), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
