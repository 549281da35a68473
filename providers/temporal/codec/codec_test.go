package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func ring(t *testing.T, active string, ids ...string) *Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for i, id := range ids {
		keys[id] = key(byte(i + 1))
	}
	k, err := NewKeyring(active, "", keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const secret = "ip-10-0-64-4.ec2.internal i-0123456789abcdef0 inflate-6b7c9-abcde"

func TestRoundTripHidesThePlaintext(t *testing.T) {
	k := ring(t, "k1", "k1")
	dc := DataConverter(k)
	p, err := dc.ToPayload(map[string]string{"node": secret})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Metadata[MetadataEncoding]) != EncodingEncrypted || string(p.Metadata[MetadataKeyID]) != "k1" {
		t.Fatalf("metadata = %v", p.Metadata)
	}
	raw, _ := protojson.Marshal(p)
	for _, s := range strings.Fields(secret) {
		if bytes.Contains(p.Data, []byte(s)) || bytes.Contains(raw, []byte(s)) {
			t.Errorf("%q in clear in the encoded payload", s)
		}
	}
	var got map[string]string
	if err := dc.FromPayload(p, &got); err != nil || got["node"] != secret {
		t.Fatalf("decoded %v, %v", got, err)
	}
	// Two encodings of the same value differ (random nonce).
	p2, _ := dc.ToPayload(map[string]string{"node": secret})
	if bytes.Equal(p.Data, p2.Data) {
		t.Error("same ciphertext twice: nonce reused")
	}
}

func TestRotationOldKeyStillDecrypts(t *testing.T) {
	old := ring(t, "2026-05", "2026-05")
	p, err := DataConverter(old).ToPayload("written before the rotation")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := NewKeyring("2026-11", "", map[string][]byte{"2026-05": key(1), "2026-11": key(9)})
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := DataConverter(rotated).FromPayload(p, &s); err != nil || s != "written before the rotation" {
		t.Fatalf("old payload after rotation: %q, %v", s, err)
	}
	np, _ := DataConverter(rotated).ToPayload("after")
	if string(np.Metadata[MetadataKeyID]) != "2026-11" {
		t.Errorf("new payload key id %s, want the active 2026-11", np.Metadata[MetadataKeyID])
	}
}

func TestUnknownAndWrongKeysFailClearly(t *testing.T) {
	p, _ := New(ring(t, "k1", "k1")).Encode([]*commonpb.Payload{{Data: []byte(secret)}})
	// Unknown id.
	_, err := New(ring(t, "k2", "k2")).Decode(p)
	if err == nil || !strings.Contains(err.Error(), `key id "k1"`) || !strings.Contains(err.Error(), "not in the keyring") {
		t.Errorf("unknown key id: %v", err)
	}
	// Same id, another key.
	other, _ := NewKeyring("k1", "", map[string][]byte{"k1": key(7)})
	if _, err := New(other).Decode(p); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Errorf("wrong key: %v", err)
	}
}

func TestTamperedCiphertextIsRefused(t *testing.T) {
	c := New(ring(t, "k1", "k1", "k2"))
	enc, _ := c.Encode([]*commonpb.Payload{{Data: []byte(secret)}})
	for name, mutate := range map[string]func(*commonpb.Payload){
		"flipped byte": func(p *commonpb.Payload) { p.Data[len(p.Data)/2] ^= 1 },
		"truncated":    func(p *commonpb.Payload) { p.Data = p.Data[:10] },
		"key id swap":  func(p *commonpb.Payload) { p.Metadata[MetadataKeyID] = []byte("k2") },
	} {
		p := &commonpb.Payload{Metadata: map[string][]byte{}, Data: append([]byte(nil), enc[0].Data...)}
		for k, v := range enc[0].Metadata {
			p.Metadata[k] = v
		}
		mutate(p)
		if _, err := c.Decode([]*commonpb.Payload{p}); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func TestPlainPayloadsPassThrough(t *testing.T) {
	plain, _ := converter.GetDefaultDataConverter().ToPayload("from before encryption")
	var s string
	if err := DataConverter(ring(t, "k1", "k1")).FromPayload(plain, &s); err != nil || s != "from before encryption" {
		t.Fatalf("%q %v", s, err)
	}
}

func TestFailureMessagesAreEncrypted(t *testing.T) {
	dc := DataConverter(ring(t, "k1", "k1"))
	fc := FailureConverter(dc)
	f := fc.ErrorToFailure(temporal.NewApplicationError("drain of "+secret+" failed", "X"))
	raw, _ := protojson.Marshal(f)
	if bytes.Contains(raw, []byte("ip-10-0-64-4")) {
		t.Fatalf("failure holds the node name in clear: %s", raw)
	}
	if err := fc.FailureToError(f); err == nil || !strings.Contains(err.Error(), "ip-10-0-64-4") {
		t.Fatalf("round trip: %v", err)
	}
}

func TestParseKeyring(t *testing.T) {
	good := func(b byte) string { return base64.StdEncoding.EncodeToString(key(b)) }
	k, err := ParseKeyring([]byte(`{"activeKeyId":"b","pseudonymKeyId":"a","keys":{"a":"` + good(1) + `","b":"` + good(2) + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if k.ActiveKeyID() != "b" || strings.Join(k.KeyIDs(), ",") != "a,b" {
		t.Errorf("active %s ids %v", k.ActiveKeyID(), k.KeyIDs())
	}
	// Pseudonyms follow the pseudonym key, not the active one.
	a, _ := ParseKeyring([]byte(`{"activeKeyId":"a","keys":{"a":"` + good(1) + `"}}`))
	if k.Pseudonym("ip-10-0-0-1.ec2.internal") != a.Pseudonym("ip-10-0-0-1.ec2.internal") {
		t.Error("pseudonym changed with the active key although pseudonymKeyId stayed")
	}
	if p := a.Pseudonym("x"); !strings.HasPrefix(p, "p-") || len(p) != 26 || p == a.Pseudonym("y") {
		t.Errorf("pseudonym %q", p)
	}
	for name, in := range map[string]string{
		"short key":      `{"activeKeyId":"a","keys":{"a":"` + base64.StdEncoding.EncodeToString(key(1)[:16]) + `"}}`,
		"no active":      `{"keys":{"a":"` + good(1) + `"}}`,
		"unknown active": `{"activeKeyId":"z","keys":{"a":"` + good(1) + `"}}`,
		"not base64":     `{"activeKeyId":"a","keys":{"a":"!!"}}`,
		"unknown field":  `{"activeKeyId":"a","key":"x","keys":{"a":"` + good(1) + `"}}`,
		"no keys":        `{"activeKeyId":"a"}`,
	} {
		if _, err := ParseKeyring([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestHTTPHandlerDecodesWithCORS(t *testing.T) {
	k := ring(t, "k1", "k1")
	srv := httptest.NewServer(NewHTTPHandler(k, DefaultUIOrigins))
	defer srv.Close()
	enc, _ := DataConverter(k).ToPayload("ip-10-0-64-4.ec2.internal")
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc}})

	// Preflight from the UI.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	req.Header.Set("Origin", "http://127.0.0.1:8233")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// Decode.
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
	req.Header.Set("Origin", "http://localhost:8233")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Payloads []struct {
			Metadata map[string]string `json:"metadata"`
			Data     string            `json:"data"`
		} `json:"payloads"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(out.Payloads) != 1 {
		t.Fatalf("decode answer %+v", out)
	}
	data, _ := base64.StdEncoding.DecodeString(out.Payloads[0].Data)
	if string(data) != `"ip-10-0-64-4.ec2.internal"` {
		t.Errorf("decoded data %q", data)
	}
	// Another origin is refused.
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
	req.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign origin: %d %v", resp.StatusCode, resp.Header)
	}
}
