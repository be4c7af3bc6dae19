// Package pki is the cluster's one identity system: a cluster certificate
// authority (CA) and certificates per role, used for mutual TLS between
// every daemon and for signing what a nimbus decides.
//
// An identity is a role and a name, carried in the certificate's subject:
// the role is the first OrganizationalUnit, the name the CommonName. An
// operator may therefore issue certificates with any PKI (openssl, cfssl,
// Vault) as long as it sets those two fields; the `ca` command of a squall
// program (package cluster/cli) does it for them.
//
// Roles and who issues them:
//
//	nimbus      the CA      serves code and the API; signs assignments
//	supervisor  the CA      runs workers; an intermediate CA (path length 0)
//	                        that issues its workers' certificates and nothing else
//	worker      a supervisor  one worker process; its name is "<topology>@<epoch>"
//	client      the CA      the command line: submit, kill, ... (policy decides)
//	admin       the CA      operators: every action, pprof
//
// A chain is accepted only in one of two shapes (IdentityOf): leaf → CA for
// every role but worker, and worker leaf → supervisor → CA. A supervisor
// cannot mint a nimbus or an admin, and a worker cannot mint anything.
//
// Files: a certificate directory holds ca.crt (the cluster CA), tls.crt
// (the leaf, then any intermediate) and tls.key (PKCS#8, mode 0600). The
// CA's own directory holds ca.crt and ca.key.
package pki
