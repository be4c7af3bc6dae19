package pki

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// File names in a certificate directory.
const (
	CAFile   = "ca.crt"
	CAKey    = "ca.key"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// WriteAuthority stores the CA in dir (created, mode 0700): ca.crt and
// ca.key. It refuses to overwrite an existing CA.
func WriteAuthority(dir string, a *Authority) error {
	if _, err := os.Stat(filepath.Join(dir, CAKey)); err == nil {
		return fmt.Errorf("%w: %s already holds a CA key; not overwriting it", ErrInvalid, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, CAFile), 0o644, certBlocks(a.Cert)...); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, CAKey), a.Key)
}

// LoadAuthority reads a CA stored by WriteAuthority.
func LoadAuthority(dir string) (*Authority, error) {
	certs, err := readCerts(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	key, err := readKey(filepath.Join(dir, CAKey))
	if err != nil {
		return nil, err
	}
	if !certs[0].IsCA || !publicKeysEqual(certs[0].PublicKey, key.Public()) {
		return nil, fmt.Errorf("%w: %s: ca.crt is not a CA certificate of ca.key", ErrInvalid, dir)
	}
	return &Authority{Cert: certs[0], Key: key}, nil
}

// WriteBundle stores a bundle in dir (created, mode 0700): ca.crt,
// tls.crt (leaf then intermediates) and tls.key (mode 0600).
func WriteBundle(dir string, b *Bundle) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, CAFile), 0o644, certBlocks(b.CA)...); err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, CertFile), 0o644, certBlocks(append([]*x509.Certificate{b.Cert}, b.Intermediates...)...)...); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, KeyFile), b.Key)
}

// LoadBundle reads a bundle stored by WriteBundle (or an operator's own:
// PEM certificates, a PKCS#8, PKCS#1 or SEC 1 key) and checks it at the
// current time.
func LoadBundle(dir string) (*Bundle, error) {
	ca, err := readCerts(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	chain, err := readCerts(filepath.Join(dir, CertFile))
	if err != nil {
		return nil, err
	}
	key, err := readKey(filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, err
	}
	b := &Bundle{Cert: chain[0], Intermediates: chain[1:], Key: key, CA: ca[0]}
	if _, err := b.Check(time.Now()); err != nil {
		return nil, fmt.Errorf("certificates in %s: %w", dir, err)
	}
	return b, nil
}

func certBlocks(certs ...*x509.Certificate) []*pem.Block {
	out := make([]*pem.Block, len(certs))
	for i, c := range certs {
		out[i] = &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}
	}
	return out
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, 0o600, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// writePEM writes blocks to path atomically with mode perm.
func writePEM(path string, perm os.FileMode, blocks ...*pem.Block) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	for _, b := range blocks {
		if err := pem.Encode(tmp, b); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func readCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrInvalid, path)
	}
	return out, nil
}

func readKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%w: %s holds no PEM key", ErrInvalid, path)
	}
	var key any
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		err = errors.New("unknown PEM type " + b.Type + " (encrypted keys are not supported: decrypt with your PKI's tools and keep the file mode 0600)")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: %s: not a signing key", ErrInvalid, path)
	}
	return s, nil
}
