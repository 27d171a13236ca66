// SPDX-License-Identifier: Apache-2.0

package tenant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The slice carries the port the pods listen on, as the endpoint slice
// controller writes it: targetPort when it is a number, port otherwise.
func TestSliceFollowsTargetPorts(t *testing.T) {
	udp := Port("dns", 53, 0)
	udp.Protocol = corev1.ProtocolUDP
	svc := Service("shop", "cart", Port("http", 80, 8080), Port("metrics", 9090, 0), udp)
	s := Slice(svc, "cart-x", discoveryv1.AddressTypeIPv6, Ready("fd00::1")...)

	assert.Equal(t, "shop", s.Namespace)
	assert.Equal(t, map[string]string{discoveryv1.LabelServiceName: "cart", discoveryv1.LabelManagedBy: EndpointSliceController}, s.Labels)
	assert.Equal(t, discoveryv1.AddressTypeIPv6, s.AddressType)
	type port struct {
		name     string
		port     int32
		protocol corev1.Protocol
	}
	var got []port
	for _, p := range s.Ports {
		got = append(got, port{*p.Name, *p.Port, *p.Protocol})
	}
	assert.Equal(t, []port{{"http", 8080, corev1.ProtocolTCP}, {"metrics", 9090, corev1.ProtocolTCP}, {"dns", 53, corev1.ProtocolUDP}}, got)
}

func TestEndpointConditions(t *testing.T) {
	for name, tt := range map[string]struct {
		eps                         []discoveryv1.Endpoint
		ready, serving, terminating bool
	}{
		"ready":       {Ready("10.0.0.1", "10.0.0.2"), true, true, false},
		"not ready":   {NotReady("10.0.0.1", "10.0.0.2"), false, false, false},
		"terminating": {Terminating("10.0.0.1", "10.0.0.2"), false, true, true},
	} {
		t.Run(name, func(t *testing.T) {
			if !assert.Len(t, tt.eps, 2) {
				return
			}
			for i, e := range tt.eps {
				assert.Equal(t, []string{[]string{"10.0.0.1", "10.0.0.2"}[i]}, e.Addresses)
				c := e.Conditions
				assert.Equal(t, []bool{tt.ready, tt.serving, tt.terminating}, []bool{*c.Ready, *c.Serving, *c.Terminating})
			}
		})
	}
}
