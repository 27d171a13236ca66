// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"errors"
	"net/http"

	"github.com/mcs-gitops/mcs-gitops/internal/redact"
)

// apiError is a failed forge call: what was attempted, the SDK's message
// with every secret removed, and the HTTP status (0 when none came back).
// It keeps no reference to the SDK's error, whose fields may hold the
// request and so the credentials.
type apiError struct {
	op     string
	msg    string
	status int
	hint   string
}

func (e *apiError) Error() string {
	s := e.op + ": " + e.msg
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrNotFound) and the like work on the status.
func (e *apiError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.status == http.StatusNotFound
	case ErrUnauthorized:
		return e.status == http.StatusUnauthorized
	case ErrForbidden:
		return e.status == http.StatusForbidden
	}
	return false
}

// sdkErrors turns a client's SDK errors into *apiError, with the secrets
// the client holds redacted from their messages.
type sdkErrors struct {
	redact redact.Redactor
	// credential names where the credentials come from, for hints.
	credential string
}

// wrap turns an SDK error into an *apiError for op. status is the HTTP
// status of the answer, 0 when there was none.
func (s sdkErrors) wrap(op string, status int, err error) error {
	if err == nil {
		return nil
	}
	e := &apiError{op: op, msg: s.redact.String(err.Error()), status: status}
	switch status {
	case http.StatusUnauthorized:
		e.hint = "the forge refused the credentials from " + s.credential
	case http.StatusForbidden:
		e.hint = "the credentials from " + s.credential + " lack a permission this needs; docs/forge.md lists them"
	case http.StatusNotFound:
		e.hint = "no such request or repository, or the credentials may not see it"
	}
	return e
}

// errNoRequest is returned when an SDK answers without an error and
// without the object asked for.
var errNoRequest = errors.New("the forge answered without a request")
