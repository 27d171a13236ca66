// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	report := `[{"RunTime": 271000000000, "SpecReports": [
	 {"LeafNodeType": "BeforeSuite", "State": "passed"},
	 {"ContainerHierarchyTexts": ["Connectivity to remote services", "with a port conflict"],
	  "ContainerHierarchyLabels": [["Optional", "Connectivity"], []],
	  "LeafNodeType": "It", "LeafNodeText": "routes | by port", "State": "failed", "RunTime": 43500000000,
	  "Failure": {"Message": "Timed out after 20s.\nExpected ..."}},
	 {"ContainerHierarchyTexts": ["Connectivity to remote services"], "ContainerHierarchyLabels": [[]],
	  "LeafNodeType": "It", "LeafNodeText": "exports", "LeafNodeLabels": ["Required"], "State": "passed", "RunTime": 3700000000},
	 {"ContainerHierarchyTexts": ["", "DNS", ""], "ContainerHierarchyLabels": [["Optional"]],
	  "LeafNodeType": "It", "LeafNodeText": "skipped one", "State": "skipped"}
	]}]`
	var b strings.Builder
	if err := write(&b, []byte(report), "IPv4"); err != nil {
		t.Fatal(err)
	}
	want := `Members: IPv4. **1 of 2 pass** (Required 1 of 1, Optional 0 of 1) in 4m31s.

| Spec | Level | Time | Result |
|---|---|---:|---|
| Connectivity to remote services › exports | Required | 3.7 s | passed |
| Connectivity to remote services › with a port conflict › routes \| by port | Optional | 43.5 s | failed: Timed out after 20s. |
| DNS › skipped one | Optional | 0.0 s | skipped |
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := write(&b, []byte(`{}`), ""); err == nil {
		t.Error("a report that is not a list of suites was accepted")
	}
	if err := write(&b, []byte(`[{"SpecReports": []}]`), ""); err == nil {
		t.Error("a report without specs was accepted")
	}
}
