package testpki

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// FileCA is a CA whose certificates are written as PEM files in a
// temporary directory of one test, for configurations that name files
// (etcd's). It fails the test it was made for when something cannot be
// made, written or read.
type FileCA struct {
	CA   *CA
	File string // the CA's certificate
	t    testing.TB
	dir  string
}

// NewFileCA makes a CA named name (see NewCA) and writes its certificate
// to the file "<name>-ca.pem".
func NewFileCA(t testing.TB, name string) *FileCA {
	t.Helper()
	f := &FileCA{CA: NewCA(t, name), t: t, dir: t.TempDir()}
	f.File = f.write(name+"-ca.pem", "CERTIFICATE", f.CA.cert.Raw)
	return f
}

// Issue issues a certificate whose common name is cn, valid on loopback
// (127.0.0.1 and localhost) for a server and for a client, and writes it
// to "<cn>.pem" and its key to "<cn>-key.pem".
func (f *FileCA) Issue(cn string) (certFile, keyFile string) {
	f.t.Helper()
	cert := f.CA.Issue(f.t, Options{CommonName: cn, Server: true, Client: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}})
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		f.t.Fatal(err)
	}
	return f.write(cn+".pem", "CERTIFICATE", cert.Certificate[0]), f.write(cn+"-key.pem", "EC PRIVATE KEY", key)
}

// ClientConfig is the configuration of a client trusting the CA (TLS 1.2
// at least, as etcd's clients), presenting the certificate in certFile
// and keyFile unless certFile is empty.
func (f *FileCA) ClientConfig(certFile, keyFile string) *tls.Config {
	f.t.Helper()
	c := &tls.Config{RootCAs: f.CA.Pool(), MinVersion: tls.VersionTLS12}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			f.t.Fatal(err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c
}

// write writes der as a PEM block of typ to the file name in f's
// directory, readable by its owner only, and returns the file's path.
func (f *FileCA) write(name, typ string, der []byte) string {
	f.t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}
