// SPDX-License-Identifier: Apache-2.0

// Package redact keeps credentials out of text a person or a log will
// see: it recognises the shapes of tokens (so a pasted one is refused in
// config and redacted in messages), the credentials in a URL's user part,
// and replaces the secrets a caller holds (a Git token, a forge token)
// wherever a library quoted them.
//
// It is the one implementation: config validation, Git, forge and member
// errors all redact through it, and a redacted error keeps its chain for
// errors.Is and errors.As. It must not read a credential, and must not
// drop an error's chain.
package redact
