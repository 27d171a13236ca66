// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"bytes"
	"fmt"
)

// Describe names where a credential lives, for an error message: the
// variable, file or Secret key, never the value.
func (s *CredentialSource) Describe() string {
	switch {
	case s == nil:
		return "nowhere"
	case s.Env != "":
		return "environment variable " + s.Env
	case s.Path != "":
		return "file " + s.Path
	case s.SecretRef != nil:
		key := s.SecretRef.Key
		if key == "" {
			key = "value"
		}
		return fmt.Sprintf("Secret %s/%s key %s", s.SecretRef.Namespace, s.SecretRef.Name, key)
	}
	return "an empty credential source"
}

// Read reads the credential through read, for the field named field. Its
// errors name the field and where the credential lives (Describe), never
// its value; a credential that is only whitespace is an error too.
func (s *CredentialSource) Read(read func(*CredentialSource) ([]byte, error), field string) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%s is not set", field)
	}
	if read == nil {
		return nil, fmt.Errorf("%s is set but no way to read credentials was given", field)
	}
	b, err := read(s)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", field, s.Describe(), err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s from %s is empty", field, s.Describe())
	}
	return b, nil
}
