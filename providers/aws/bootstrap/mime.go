package bootstrap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
)

// MIME constants as Karpenter and nodeadm use them.
const (
	boundary               = "//"
	contentTypeMultipart   = `multipart/mixed; boundary="` + boundary + `"`
	contentTypeShellScript = `text/x-shellscript; charset="us-ascii"`
	contentTypeCloudConfig = `text/cloud-config; charset="us-ascii"`
	contentTypeNodeConfig  = "application/node.eks.aws"
)

// part is one entry of a multi-part document: its headers (Content-Type
// always among them unless the user's part had none) and body.
type part struct {
	header textproto.MIMEHeader
	body   string
}

func (p part) mediaType() string {
	mt, _, err := mime.ParseMediaType(p.header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// isMIME reports whether user data is a MIME document, by Karpenter's test.
func isMIME(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "MIME-Version:") || strings.HasPrefix(t, "Content-Type:")
}

// parseMIME splits a multi-part document into its parts.
func parseMIME(s string) ([]part, error) {
	msg, err := mail.ReadMessage(strings.NewReader(s))
	if err != nil {
		return nil, userDataError("not a valid MIME document: %v", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, userDataError("MIME document without a valid Content-Type header: %v", err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return nil, userDataError("MIME document is %s, not multipart", mt)
	}
	if params["boundary"] == "" {
		return nil, userDataError("multipart MIME document without a boundary")
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []part
	for i := 1; ; i++ {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, userDataError("MIME part %d: %v", i, err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, userDataError("MIME part %d: %v", i, err)
		}
		h := textproto.MIMEHeader{}
		for k, v := range p.Header {
			h[k] = append([]string(nil), v...)
		}
		if ct := h.Get("Content-Type"); ct != "" {
			if _, _, err := mime.ParseMediaType(ct); err != nil {
				return nil, userDataError("MIME part %d: Content-Type %q: %v", i, ct, err)
			}
		}
		parts = append(parts, part{header: h, body: string(body)})
	}
	if len(parts) == 0 {
		return nil, userDataError("multipart MIME document has no parts (boundary %q never starts one)", params["boundary"])
	}
	return parts, nil
}

// serializeMIME writes parts as one multi-part document with boundary "//",
// carriage returns removed (as Karpenter does).
func serializeMIME(parts []part) (string, error) {
	var buf bytes.Buffer
	buf.WriteString("MIME-Version: 1.0\n")
	buf.WriteString("Content-Type: " + contentTypeMultipart + "\n\n")
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(boundary); err != nil {
		return "", err
	}
	for i, p := range parts {
		body := strings.ReplaceAll(p.body, "\r", "")
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "--"+boundary) {
				return "", userDataError("part %d has a line starting with the MIME boundary %q", i+1, "--"+boundary)
			}
		}
		for k, vs := range p.header {
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					return "", userDataError("part %d: header %s has a line break", i+1, k)
				}
			}
		}
		pw, err := w.CreatePart(p.header)
		if err != nil {
			return "", fmt.Errorf("MIME part %d: %w", i+1, err)
		}
		if _, err := pw.Write([]byte(body)); err != nil {
			return "", fmt.Errorf("MIME part %d: %w", i+1, err)
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return strings.ReplaceAll(buf.String(), "\r", ""), nil
}

func newPart(contentType, body string) part {
	return part{header: textproto.MIMEHeader{"Content-Type": {contentType}}, body: body}
}
