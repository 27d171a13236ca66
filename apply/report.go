package apply

import "github.com/mcs-gitops/mcs-gitops/render"

// ReadReport rebuilds the render report from the status/<ns>/<svc>.yaml
// files of a commit (keys relative to the repository sub-path), for the
// status write-back of `apply --ref`. Other files (SUMMARY.md,
// members.yaml, clusters/...) are ignored. It is render.ReadReport: the
// format belongs to the renderer.
func ReadReport(files map[string][]byte) (*render.Report, error) {
	return render.ReadReport(files)
}
