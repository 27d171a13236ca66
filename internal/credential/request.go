// SPDX-License-Identifier: Apache-2.0

package credential

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	clientauthv1beta1 "k8s.io/client-go/pkg/apis/clientauthentication/v1beta1"
)

// ExecInfoEnv is the variable client-go passes the request in.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// ExecExtension is the name of the cluster extension whose value client-go
// passes as spec.cluster.config: a kubeconfig cluster's, or, through the
// cluster inventory's access library, a ClusterProfile access provider's.
const ExecExtension = "client.authentication.k8s.io/exec"

const kind = "ExecCredential"

// The versions of the client authentication API a request may use; the
// response has the request's, as client-go requires.
var (
	v1      = clientauthv1.SchemeGroupVersion.String()
	v1beta1 = clientauthv1beta1.SchemeGroupVersion.String()
)

// Request is what the plugin reads from an ExecCredential.
type Request struct {
	// APIVersion is the request's, client.authentication.k8s.io/v1 or
	// v1beta1.
	APIVersion string
	// ClusterName is spec.cluster.config.clusterName: the name of the
	// Secret holding the token.
	ClusterName string
}

// clusterConfig is the exec extension's value, as upstream's secretreader
// reads it.
type clusterConfig struct {
	ClusterName string `json:"clusterName"`
}

// ParseRequest reads the ExecCredential client-go sent. It refuses a request
// without spec.cluster (the provider did not ask for cluster information)
// and one whose spec.cluster.config names no valid clusterName.
func ParseRequest(data []byte) (Request, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Request{}, fmt.Errorf("%s is not set: this command is a client-go exec credential plugin; "+
			"client-go runs it with the request in %s", ExecInfoEnv, ExecInfoEnv)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return Request{}, fmt.Errorf("%s is not an ExecCredential in JSON: %w", ExecInfoEnv, err)
	}
	if tm.Kind != kind || (tm.APIVersion != v1 && tm.APIVersion != v1beta1) {
		return Request{}, fmt.Errorf("%s holds apiVersion %q, kind %q: want kind %s of %s or %s",
			ExecInfoEnv, tm.APIVersion, tm.Kind, kind, v1, v1beta1)
	}
	// v1 and v1beta1 have the same fields; each is read as its own type.
	var cluster *runtime.RawExtension
	present := false
	switch tm.APIVersion {
	case v1:
		var ec clientauthv1.ExecCredential
		if err := json.Unmarshal(data, &ec); err != nil {
			return Request{}, fmt.Errorf("%s: %w", ExecInfoEnv, err)
		}
		if ec.Spec.Cluster != nil {
			present, cluster = true, &ec.Spec.Cluster.Config
		}
	default:
		var ec clientauthv1beta1.ExecCredential
		if err := json.Unmarshal(data, &ec); err != nil {
			return Request{}, fmt.Errorf("%s: %w", ExecInfoEnv, err)
		}
		if ec.Spec.Cluster != nil {
			present, cluster = true, &ec.Spec.Cluster.Config
		}
	}
	if !present {
		return Request{}, fmt.Errorf("%s has no spec.cluster: set \"provideClusterInfo\": true in the provider's execConfig "+
			"(the access provider file), so that client-go passes the cluster and its %s extension", ExecInfoEnv, ExecExtension)
	}
	raw := bytes.TrimSpace(cluster.Raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Request{}, fmt.Errorf("%s has no spec.cluster.config: the ClusterProfile's access provider needs the cluster extension "+
			"%s with {\"clusterName\": <the Secret's name>}", ExecInfoEnv, ExecExtension)
	}
	var cfg clusterConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return Request{}, fmt.Errorf("%s: spec.cluster.config (the %s extension) is not an object with clusterName: %w",
			ExecInfoEnv, ExecExtension, err)
	}
	if cfg.ClusterName == "" {
		return Request{}, fmt.Errorf("%s: spec.cluster.config (the %s extension) has no clusterName: "+
			"set it to the name of the Secret that holds the cluster's token", ExecInfoEnv, ExecExtension)
	}
	if errs := validation.IsDNS1123Subdomain(cfg.ClusterName); len(errs) > 0 {
		return Request{}, fmt.Errorf("%s: clusterName %q cannot name a Secret: %s", ExecInfoEnv, cfg.ClusterName, strings.Join(errs, "; "))
	}
	return Request{APIVersion: tm.APIVersion, ClusterName: cfg.ClusterName}, nil
}

// Response is the ExecCredential that answers a request of apiVersion with
// token, as one line of JSON. It carries no expirationTimestamp: the Secret
// says nothing of when the token expires, and client-go runs the plugin
// again when the cluster answers 401.
func Response(apiVersion, token string) ([]byte, error) {
	if token == "" {
		return nil, errors.New("no token to answer with")
	}
	var obj any
	switch apiVersion {
	case v1:
		obj = &clientauthv1.ExecCredential{
			TypeMeta: metav1.TypeMeta{APIVersion: v1, Kind: kind},
			Status:   &clientauthv1.ExecCredentialStatus{Token: token},
		}
	case v1beta1:
		obj = &clientauthv1beta1.ExecCredential{
			TypeMeta: metav1.TypeMeta{APIVersion: v1beta1, Kind: kind},
			Status:   &clientauthv1beta1.ExecCredentialStatus{Token: token},
		}
	default:
		return nil, fmt.Errorf("apiVersion %q: want %s or %s", apiVersion, v1, v1beta1)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		// Not %w: the encoder's error could quote the value.
		return nil, errors.New("encoding the ExecCredential failed")
	}
	return append(b, '\n'), nil
}
