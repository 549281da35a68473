// Package codec encrypts Temporal payloads with AES-256-GCM so that the
// Temporal server (and anyone reading its database) stores workflow and
// activity inputs, results, signals, heartbeats and failure messages only
// as ciphertext.
//
// Keys live in a Keyring: key id -> 32-byte key, with one active key id.
// Encode encrypts with the active key and writes its id into the payload
// metadata (MetadataKeyID), so keys can rotate: add a new key, make it
// active, keep the old ones for as long as histories encrypted with them
// must be read. Decode picks the key by that id; a payload that is not
// encrypted (written before encryption was turned on) passes through
// unchanged.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
)

// Payload metadata written by Encode.
const (
	// MetadataEncoding is the standard Temporal metadata key naming a
	// payload's encoding; encrypted payloads carry EncodingEncrypted.
	MetadataEncoding  = converter.MetadataEncoding
	EncodingEncrypted = "binary/encrypted"
	// MetadataKeyID names the keyring entry that encrypted the payload.
	MetadataKeyID = "encryption-key-id"
)

// KeySize is the length of every key in bytes (AES-256).
const KeySize = 32

// Keyring holds the encryption keys by id, the id new payloads are
// encrypted with, and the id whose key derives pseudonyms. It is immutable
// and safe for concurrent use.
type Keyring struct {
	active    string
	pseudonym string
	keys      map[string][]byte
	aeads     map[string]cipher.AEAD
	nymKey    []byte
}

// KeyringFile is the JSON form of a keyring (the --codec-key-file file, or
// the JOINERY_CODEC_KEYS environment variable):
//
//	{"activeKeyId": "2026-11", "keys": {"2026-11": "<base64 of 32 bytes>", "2026-05": "..."}}
//
// PseudonymKeyID (optional, default ActiveKeyID) names the key that derives
// the pseudonyms standing in for node names and instance ids in workflow
// ids; keep it on one key across rotations so those ids stay stable.
type KeyringFile struct {
	ActiveKeyID    string            `json:"activeKeyId"`
	PseudonymKeyID string            `json:"pseudonymKeyId,omitempty"`
	Keys           map[string]string `json:"keys"`
}

// NewKeyring builds a keyring. Every key must be KeySize bytes; active must
// name one of them; pseudonymKeyID may be empty (then active is used).
func NewKeyring(active, pseudonymKeyID string, keys map[string][]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("codec keyring: no keys")
	}
	if active == "" {
		return nil, errors.New("codec keyring: no active key id")
	}
	if pseudonymKeyID == "" {
		pseudonymKeyID = active
	}
	k := &Keyring{active: active, pseudonym: pseudonymKeyID, keys: map[string][]byte{}, aeads: map[string]cipher.AEAD{}}
	for id, key := range keys {
		if id == "" || strings.ContainsAny(id, " \t\r\n") {
			return nil, fmt.Errorf("codec keyring: key id %q: empty or contains white space", id)
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("codec keyring: key %q is %d bytes, want %d (AES-256)", id, len(key), KeySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("codec keyring: key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("codec keyring: key %q: %w", id, err)
		}
		k.keys[id] = append([]byte(nil), key...)
		k.aeads[id] = aead
	}
	if _, ok := k.keys[active]; !ok {
		return nil, fmt.Errorf("codec keyring: active key id %q is not among the keys (%s)", active, strings.Join(k.KeyIDs(), ", "))
	}
	base, ok := k.keys[pseudonymKeyID]
	if !ok {
		return nil, fmt.Errorf("codec keyring: pseudonym key id %q is not among the keys (%s)", pseudonymKeyID, strings.Join(k.KeyIDs(), ", "))
	}
	// A separate key for pseudonyms, so the encryption key is never used
	// for anything else.
	m := hmac.New(sha256.New, base)
	m.Write([]byte("joinery pseudonym key v1"))
	k.nymKey = m.Sum(nil)
	return k, nil
}

// ParseKeyring reads the JSON form (KeyringFile); keys are standard or
// URL-safe base64, padded or not.
func ParseKeyring(data []byte) (*Keyring, error) {
	var f KeyringFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("codec keyring: not the JSON {\"activeKeyId\": ..., \"keys\": {id: base64}}: %w", err)
	}
	keys := map[string][]byte{}
	for id, s := range f.Keys {
		b, err := decodeBase64(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("codec keyring: key %q is not base64: %w", id, err)
		}
		keys[id] = b
	}
	return NewKeyring(f.ActiveKeyID, f.PseudonymKeyID, keys)
}

// LoadKeyringFile reads a keyring file (see KeyringFile).
func LoadKeyringFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("codec key file: %w", err)
	}
	k, err := ParseKeyring(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// GenerateKeyringFile returns a new keyring file with one random key of the
// given id, active.
func GenerateKeyringFile(id string) (KeyringFile, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return KeyringFile{}, err
	}
	return KeyringFile{ActiveKeyID: id, Keys: map[string]string{id: base64.StdEncoding.EncodeToString(key)}}, nil
}

func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return nil, err
}

// ActiveKeyID is the id new payloads are encrypted with.
func (k *Keyring) ActiveKeyID() string { return k.active }

// KeyIDs lists the known key ids, sorted.
func (k *Keyring) KeyIDs() []string {
	ids := make([]string, 0, len(k.keys))
	for id := range k.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Pseudonym is a keyed hash of s ("p-" and 24 hex digits: HMAC-SHA256 with
// a key derived from the pseudonym key), used instead of a node name or an
// instance id where Temporal stores text in clear (workflow ids). The same
// s and keyring always give the same pseudonym; without the key it cannot
// be reversed or recomputed.
func (k *Keyring) Pseudonym(s string) string {
	m := hmac.New(sha256.New, k.nymKey)
	m.Write([]byte(s))
	return "p-" + hex.EncodeToString(m.Sum(nil)[:12])
}

// Codec is the AES-256-GCM converter.PayloadCodec over a Keyring.
type Codec struct{ keys *Keyring }

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec for a keyring.
func New(k *Keyring) *Codec { return &Codec{keys: k} }

// Encode encrypts every payload (the whole Payload message, metadata
// included) with the active key. The output has metadata
// encoding=binary/encrypted and encryption-key-id=<id>; its data is the
// 12-byte nonce followed by the ciphertext and tag. The key id is
// authenticated too (GCM additional data), so it cannot be swapped.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	id := c.keys.active
	aead := c.keys.aeads[id]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return payloads, fmt.Errorf("codec: marshal payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return payloads, fmt.Errorf("codec: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{MetadataEncoding: []byte(EncodingEncrypted), MetadataKeyID: []byte(id)},
			Data:     aead.Seal(nonce, nonce, plain, []byte(id)),
		}
	}
	return out, nil
}

// Decode decrypts payloads encrypted by Encode with any key of the
// keyring; other payloads are returned unchanged. It fails with an error
// naming the key id when that id is unknown (the key was removed, or the
// payload comes from another keyring), and when authentication fails
// (wrong key, or the ciphertext was altered).
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := c.keys.aeads[id]
		if !ok {
			return payloads, fmt.Errorf("codec: payload encrypted with key id %q, which is not in the keyring (known: %s)",
				id, strings.Join(c.keys.KeyIDs(), ", "))
		}
		data := p.GetData()
		if len(data) < aead.NonceSize()+aead.Overhead() {
			return payloads, fmt.Errorf("codec: payload encrypted with key id %q is truncated (%d bytes)", id, len(data))
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return payloads, fmt.Errorf("codec: payload encrypted with key id %q does not decrypt (wrong key or altered ciphertext): %w", id, err)
		}
		dp := &commonpb.Payload{}
		if err := proto.Unmarshal(plain, dp); err != nil {
			return payloads, fmt.Errorf("codec: decrypted payload (key id %q) is not a Payload: %w", id, err)
		}
		out[i] = dp
	}
	return out, nil
}

// DataConverter is the default data converter with payloads encrypted by
// the keyring's codec; set it as client.Options.DataConverter (and on a
// replayer to replay encrypted histories).
func DataConverter(k *Keyring) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(k))
}

// FailureConverter moves failure messages and stack traces into an
// encoded (so encrypted) payload, as Temporal's EncodeCommonAttributes
// does: the server then stores "Encoded failure" instead of an error
// message that may name a node or a pod. dc must be DataConverter(k).
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})
}
