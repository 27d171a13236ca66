// Package clusters is the ClusterSet registry: it turns clusterset.yaml into
// member clusters and owns what is read from them. The snapshot type and its
// file format live in the snapshot subpackage, so the pure renderer can use
// them without depending on cluster clients.
package clusters
