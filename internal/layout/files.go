// SPDX-License-Identifier: Apache-2.0

package layout

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mcs-gitops/mcs-gitops/internal/yamlfast"
	"github.com/mcs-gitops/mcs-gitops/render"
)

// gatewaysDoc is status/gateways.yaml.
type gatewaysDoc struct {
	Gateways []render.GatewayReport `json:"gateways"`
}

// Files lays the output out as the rendered repository: one file per object
// under clusters/<member>/, a kustomization.yaml per member listing them,
// and the report under status/. Keys are slash-separated paths; the bytes
// are identical for identical input. Files with the same content may share
// one byte slice: treat the values as read-only.
func Files(out *render.Output) (map[string][]byte, error) {
	var jobs []fileJob
	for _, m := range out.Members {
		resources := make([]string, 0, len(m.Objects))
		for _, o := range m.Objects {
			jobs = append(jobs, objectJob(m.Name, o))
			resources = append(resources, o.Path)
		}
		jobs = append(jobs, kustomizationJob(m.Name, resources))
	}
	for i := range out.Report.Services {
		jobs = append(jobs, statusJob(&out.Report.Services[i]))
	}
	if len(out.Report.Gateways) > 0 {
		jobs = append(jobs, gatewaysJob(out.Report.Gateways))
	}

	results, err := serialize(jobs)
	if err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(jobs)+1)
	for i, j := range jobs {
		files[j.path] = results[i]
	}
	names := make([]string, len(out.Members))
	for i, m := range out.Members {
		names[i] = m.Name
	}
	files[SummaryFile] = []byte(Summary(&out.Report, names))
	return files, nil
}

// serialize marshals every job. Every file is serialized on its own, so
// a fixed pool of workers does them in parallel; results land by index
// and the first error in the sequential order is the one returned, so
// neither bytes nor errors depend on scheduling.
func serialize(jobs []fileJob) ([][]byte, error) {
	results := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	cache := &yamlCache{m: map[string][]byte{}}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			enc := yamlfast.NewEncoder()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				results[i], errs[i] = jobs[i].marshal(enc, cache)
			}
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		if err := errs[i]; err != nil {
			if j.member == "" {
				return nil, fmt.Errorf("status of %s: %w", j.name, err)
			}
			return nil, fmt.Errorf("member %q: %s: %w", j.member, j.name, err)
		}
	}
	return results, nil
}

func objectJob(member string, o render.Object) fileJob {
	return fileJob{path: MemberDir(member) + o.Path, obj: o.Object, object: true, member: member, name: o.Path}
}

// kustomizationJob is a member's kustomization.yaml, listing resources
// in the order given.
func kustomizationJob(member string, resources []string) fileJob {
	return fileJob{
		path: MemberDir(member) + "kustomization.yaml",
		obj: map[string]any{
			"apiVersion": "kustomize.config.k8s.io/v1beta1",
			"kind":       "Kustomization",
			"resources":  resources,
		},
		member: member, name: "kustomization.yaml",
	}
}

func statusJob(s *render.ServiceReport) fileJob {
	return fileJob{path: ServiceStatusFile(s.Namespace, s.Name), obj: s, name: s.Namespace + "/" + s.Name}
}

func gatewaysJob(gws []render.GatewayReport) fileJob {
	return fileJob{path: GatewaysFile, obj: gatewaysDoc{Gateways: gws}, name: "gateways"}
}

// fileJob is one file of the rendered repository to serialize.
type fileJob struct {
	path string
	obj  any
	// object files go through Marshal; the others are yaml.Marshal output
	// under the generated-file header.
	object bool
	// member and name say which file failed; member is empty for status.
	member, name string
}

// yamlCache maps an object's JSON to its YAML. Every member importing a
// service gets the same ServiceImport, derived Service and EndpointSlices,
// so at scale most objects are converted once and the rest are a lookup,
// which also keeps one copy of their bytes instead of one per member.
type yamlCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (j *fileJob) marshal(enc *yamlfast.Encoder, cache *yamlCache) ([]byte, error) {
	if j.object {
		js, err := enc.JSON(j.obj)
		if err != nil {
			return nil, err
		}
		cache.mu.Lock()
		b, ok := cache.m[string(js)]
		cache.mu.Unlock()
		if ok {
			return b, nil
		}
		if b, err = enc.Object(js); err != nil {
			return nil, err
		}
		cache.mu.Lock()
		cache.m[string(js)] = b
		cache.mu.Unlock()
		return b, nil
	}
	js, err := enc.JSON(j.obj)
	if err != nil {
		return nil, fmt.Errorf("error marshaling into JSON: %w", err)
	}
	return enc.Document(js, generatedHeader)
}

const generatedHeader = "# Rendered by mcs-gitops; edits are overwritten.\n"
