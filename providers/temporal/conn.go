// Package temporal turns Joinery's Temporal connection settings (address,
// namespace, mTLS files, API key, payload encryption keys) into
// client.Options, the same way for the worker and for every starter command.
//
// It refuses settings that would silently connect with less protection than
// asked for: a client certificate without its key (or the reverse), a TLS
// server name or CA with nothing else that turns TLS on... see Load.
package temporal

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/joinery/joinery/providers/temporal/codec"
	"go.temporal.io/sdk/client"
)

// Environment variables read by FromEnv (the Helm chart sets the TEMPORAL_*
// ones from its temporal.tls and temporal.apiKey values).
const (
	EnvTLSCert       = "TEMPORAL_TLS_CERT"        // client certificate file (PEM)
	EnvTLSKey        = "TEMPORAL_TLS_KEY"         // its private key file (PEM)
	EnvTLSCA         = "TEMPORAL_TLS_CA"          // CA bundle file (PEM) to verify the server
	EnvTLSServerName = "TEMPORAL_TLS_SERVER_NAME" // expected server name (SNI), when not the address's host
	EnvAPIKey        = "TEMPORAL_API_KEY"         // API key (Temporal Cloud); a secret, so never a flag
	EnvCodecKeyFile  = "JOINERY_CODEC_KEY_FILE"   // keyring file (see codec.KeyringFile)
	EnvCodecKeys     = "JOINERY_CODEC_KEYS"       // keyring JSON inline; a secret, so never a flag
)

// The frontend address and namespace an empty Config uses.
const (
	DefaultHostPort  = "127.0.0.1:7233"
	DefaultNamespace = "default"
)

// Config is how to reach Temporal. The zero value (plus HostPort) is a
// plaintext connection with payloads in clear, which is what the local
// world uses on loopback.
type Config struct {
	HostPort  string // host:port of the frontend (default 127.0.0.1:7233)
	Namespace string // default "default"

	// mTLS: TLSCertFile and TLSKeyFile (PEM) go together. TLSCAFile (PEM)
	// replaces the system roots for verifying the server; given alone it
	// means server-authenticated TLS without a client certificate (for an
	// API key, or a server that does not ask for one). TLSServerName
	// overrides the name the server certificate is checked against.
	TLSCertFile, TLSKeyFile, TLSCAFile, TLSServerName string
	// TLS turns TLS on with the system roots when nothing else does (an
	// API key turns it on by itself).
	TLS bool

	// APIKey (or the first line of APIKeyFile; not both) is sent as a
	// bearer token on every call; it implies TLS.
	APIKey, APIKeyFile string

	// Payload encryption: a keyring file (CodecKeyFile) or the keyring JSON
	// itself (CodecKeys); not both. Empty: payloads in clear.
	CodecKeyFile, CodecKeys string
}

// FromEnv returns the Config the environment variables above describe
// (getenv is os.Getenv outside tests); flags bound with BindFlags then
// override it.
func FromEnv(getenv func(string) string) Config {
	return Config{
		TLSCertFile: getenv(EnvTLSCert), TLSKeyFile: getenv(EnvTLSKey), TLSCAFile: getenv(EnvTLSCA),
		TLSServerName: getenv(EnvTLSServerName), APIKey: getenv(EnvAPIKey),
		CodecKeyFile: getenv(EnvCodecKeyFile), CodecKeys: getenv(EnvCodecKeys),
	}
}

// FlagSet is what BindFlags needs: both flag.FlagSet and pflag.FlagSet have it.
type FlagSet interface {
	StringVar(p *string, name, value, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}

// BindFlags adds the security flags (their defaults are c's current values,
// typically FromEnv's). Address and namespace flags are the caller's.
// Secrets (the API key, the keyring) have no flag of their own: only a
// file flag or the environment, so they never show in a process list.
func (c *Config) BindFlags(fs FlagSet) {
	fs.StringVar(&c.TLSCertFile, "temporal-tls-cert", c.TLSCertFile, "client certificate file (PEM) for mTLS to Temporal; needs --temporal-tls-key (env "+EnvTLSCert+")")
	fs.StringVar(&c.TLSKeyFile, "temporal-tls-key", c.TLSKeyFile, "private key file (PEM) of --temporal-tls-cert (env "+EnvTLSKey+")")
	fs.StringVar(&c.TLSCAFile, "temporal-tls-ca", c.TLSCAFile, "CA bundle (PEM) that signed Temporal's server certificate (empty: system roots; env "+EnvTLSCA+")")
	fs.StringVar(&c.TLSServerName, "temporal-tls-server-name", c.TLSServerName, "server name Temporal's certificate must carry, when not the address's host (env "+EnvTLSServerName+")")
	fs.BoolVar(&c.TLS, "temporal-tls", c.TLS, "TLS to Temporal with the system roots even without a certificate or CA file")
	fs.StringVar(&c.APIKeyFile, "temporal-api-key-file", c.APIKeyFile, "file holding a Temporal API key (or env "+EnvAPIKey+"); implies TLS")
	fs.StringVar(&c.CodecKeyFile, "codec-key-file", c.CodecKeyFile, "keyring file that turns on payload encryption (AES-256-GCM; or env "+EnvCodecKeyFile+", or the keyring JSON in "+EnvCodecKeys+")")
}

// Connection is a loaded Config.
type Connection struct {
	// Options to dial with; callers add Logger, MetricsHandler...
	Options client.Options
	// Keyring is the payload encryption keyring; nil when payloads are in clear.
	Keyring *codec.Keyring
}

// Encrypted reports whether payloads are encrypted.
func (c *Connection) Encrypted() bool { return c.Keyring != nil }

// Plaintext reports whether the connection is not TLS.
func (c *Connection) Plaintext() bool { return c.Options.ConnectionOptions.TLS == nil }

// Describe is a one-line summary for logs ("mTLS, payloads encrypted (key k1)").
func (c *Connection) Describe() string {
	parts := []string{}
	switch tc := c.Options.ConnectionOptions.TLS; {
	case tc == nil:
		parts = append(parts, "plaintext")
	case len(tc.Certificates) > 0:
		parts = append(parts, "mTLS")
	default:
		parts = append(parts, "TLS")
	}
	if c.Options.Credentials != nil {
		parts = append(parts, "API key")
	}
	if c.Keyring != nil {
		parts = append(parts, "payloads encrypted (active key "+c.Keyring.ActiveKeyID()+")")
	} else {
		parts = append(parts, "payloads in clear")
	}
	return strings.Join(parts, ", ")
}

// Load checks the settings, reads the files and returns the options. It
// fails (naming the flag and environment variable) when:
//   - only one of TLSCertFile and TLSKeyFile is set, a file cannot be read,
//     holds no PEM certificate, or the key does not match the certificate;
//   - TLSServerName is set but nothing turns TLS on (no certificate, CA,
//     --temporal-tls or API key): the name would be ignored;
//   - both APIKey and APIKeyFile are set, or the key is empty;
//   - both CodecKeyFile and CodecKeys are set, or the keyring is invalid.
//
// A CA file alone is accepted: TLS that authenticates the server only.
func Load(c Config) (*Connection, error) {
	if c.HostPort == "" {
		c.HostPort = DefaultHostPort
	}
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	conn := &Connection{Options: client.Options{HostPort: c.HostPort, Namespace: c.Namespace}}

	apiKey, err := loadAPIKey(c)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := loadTLS(c, apiKey != "")
	if err != nil {
		return nil, err
	}
	conn.Options.ConnectionOptions.TLS = tlsCfg
	if apiKey != "" {
		conn.Options.Credentials = client.NewAPIKeyStaticCredentials(apiKey)
	}

	switch {
	case c.CodecKeyFile != "" && c.CodecKeys != "":
		return nil, fmt.Errorf("payload encryption: both --codec-key-file (%s) and %s are set; keep one", EnvCodecKeyFile, EnvCodecKeys)
	case c.CodecKeyFile != "":
		conn.Keyring, err = codec.LoadKeyringFile(c.CodecKeyFile)
	case c.CodecKeys != "":
		conn.Keyring, err = codec.ParseKeyring([]byte(c.CodecKeys))
		if err != nil {
			err = fmt.Errorf("%s: %w", EnvCodecKeys, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("payload encryption: %w", err)
	}
	if conn.Keyring != nil {
		dc := codec.DataConverter(conn.Keyring)
		conn.Options.DataConverter = dc
		conn.Options.FailureConverter = codec.FailureConverter(dc)
	}
	return conn, nil
}

func loadAPIKey(c Config) (string, error) {
	if c.APIKey != "" && c.APIKeyFile != "" {
		return "", fmt.Errorf("temporal API key: both --temporal-api-key-file and %s are set; keep one", EnvAPIKey)
	}
	if c.APIKeyFile == "" {
		return strings.TrimSpace(c.APIKey), nil
	}
	b, err := os.ReadFile(c.APIKeyFile)
	if err != nil {
		return "", fmt.Errorf("temporal API key (--temporal-api-key-file): %w", err)
	}
	key := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if key == "" {
		return "", fmt.Errorf("temporal API key: %s is empty", c.APIKeyFile)
	}
	return key, nil
}

func loadTLS(c Config, apiKey bool) (*tls.Config, error) {
	switch {
	case c.TLSCertFile != "" && c.TLSKeyFile == "":
		return nil, fmt.Errorf("temporal TLS half-configured: a client certificate (--temporal-tls-cert / %s = %s) but no key (--temporal-tls-key / %s)",
			EnvTLSCert, c.TLSCertFile, EnvTLSKey)
	case c.TLSKeyFile != "" && c.TLSCertFile == "":
		return nil, fmt.Errorf("temporal TLS half-configured: a client key (--temporal-tls-key / %s = %s) but no certificate (--temporal-tls-cert / %s)",
			EnvTLSKey, c.TLSKeyFile, EnvTLSCert)
	}
	on := c.TLS || apiKey || c.TLSCertFile != "" || c.TLSCAFile != ""
	if !on {
		if c.TLSServerName != "" {
			return nil, fmt.Errorf("temporal TLS half-configured: a server name (--temporal-tls-server-name / %s = %s) but TLS is off; "+
				"give a CA (--temporal-tls-ca), a client certificate, an API key or --temporal-tls", EnvTLSServerName, c.TLSServerName)
		}
		return nil, nil
	}
	// An empty ServerName is filled from the address by gRPC.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	if c.TLSCertFile != "" {
		certPEM, err := os.ReadFile(c.TLSCertFile)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS client certificate (--temporal-tls-cert / %s): %w", EnvTLSCert, err)
		}
		keyPEM, err := os.ReadFile(c.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS client key (--temporal-tls-key / %s): %w", EnvTLSKey, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS client certificate %s and key %s: %w", c.TLSCertFile, c.TLSKeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.TLSCAFile != "" {
		caPEM, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS CA (--temporal-tls-ca / %s): %w", EnvTLSCA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("temporal TLS CA %s holds no PEM certificate", c.TLSCAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// IsLoopback reports whether hostPort's host is a loopback address or
// "localhost" (where a plaintext connection stays on the machine).
func IsLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNoKeyring is returned by RequireKeyring when encryption is off.
var ErrNoKeyring = errors.New("no payload encryption keyring: pass --codec-key-file or set " + EnvCodecKeyFile + " or " + EnvCodecKeys)

// RequireKeyring returns the keyring of c, or ErrNoKeyring.
func RequireKeyring(c Config) (*codec.Keyring, error) {
	conn, err := Load(c)
	if err != nil {
		return nil, err
	}
	if conn.Keyring == nil {
		return nil, ErrNoKeyring
	}
	return conn.Keyring, nil
}
