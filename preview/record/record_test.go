package record

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func pod() map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"name": "checkout-7d9f-abcde", "namespace": "payments", "uid": "u-1", "generateName": "checkout-7d9f-",
			"labels":          map[string]any{"app": "checkout", "team": "payments-core"},
			"annotations":     map[string]any{"karpenter.sh/do-not-disrupt": "true", "secret-ish": "s3cr3t"},
			"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "name": "checkout-7d9f", "uid": "u-rs"}},
			"managedFields":   []any{map[string]any{"manager": "kubectl"}},
		},
		"spec": map[string]any{
			"nodeSelector": map[string]any{"kubernetes.io/arch": "arm64", "team": "payments-core"},
			"containers": []any{map[string]any{"name": "app", "image": "registry.example.com/checkout:1.2", "env": []any{map[string]any{"name": "PASSWORD", "value": "hunter2"}},
				"resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}}}},
			"volumes":  []any{map[string]any{"name": "cfg", "configMap": map[string]any{"name": "checkout-config"}}, map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "checkout-data"}}},
			"nodeName": "ip-10-0-1-2.ec2.internal",
		},
		"status": map[string]any{"phase": "Running", "podIP": "10.0.1.9"},
	}
}

func node() map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "ip-10-0-1-2.ec2.internal", "labels": map[string]any{
			"kubernetes.io/hostname": "ip-10-0-1-2.ec2.internal", "node.kubernetes.io/instance-type": "m6g.xlarge",
			"topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "spot", "team": "payments-core"}},
		"spec":   map[string]any{"providerID": "aws:///us-east-1a/i-0abc"},
		"status": map[string]any{"allocatable": map[string]any{"cpu": "3920m"}},
	}
}

// Trim keeps what scheduling reads and nothing a container runs with.
func TestTrimKeepsSchedulingOnly(t *testing.T) {
	got := Kinds[0].Trim(pod())
	b, _ := json.Marshal(got)
	s := string(b)
	for _, gone := range []string{"registry.example.com", "hunter2", "PASSWORD", "s3cr3t", "managedFields", "checkout-config", "podIP", "generateName"} {
		if strings.Contains(s, gone) {
			t.Errorf("trimmed pod still has %q: %s", gone, s)
		}
	}
	for _, kept := range []string{`"cpu":"500m"`, "checkout-data", "karpenter.sh/do-not-disrupt", `"nodeName"`, `"phase":"Running"`, `"team":"payments-core"`} {
		if !strings.Contains(s, kept) {
			t.Errorf("trimmed pod lost %s: %s", kept, s)
		}
	}
}

// Anonymize hashes every name, namespace and label value of the source
// consistently (selectors and owners still match), keeps the cloud's
// facts, and the file shows none of the source's names.
func TestAnonymize(t *testing.T) {
	byKind := map[string]Kind{}
	for _, k := range Kinds {
		byKind[k.Name] = k
	}
	rs := map[string]any{"metadata": map[string]any{"name": "checkout-7d9f", "namespace": "payments", "uid": "u-rs"}}
	r := &Recording{Version: Version, Start: time.Unix(0, 0), Objects: []Object{
		{Kind: "Pod", Object: byKind["Pod"].Trim(pod())},
		{Kind: "Node", Object: byKind["Node"].Trim(node())},
		{Kind: "ReplicaSet", Object: byKind["ReplicaSet"].Trim(rs)},
	}}
	Anonymize(r, "salt")
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, name := range []string{"checkout", "payments", "ip-10-0-1-2", "u-rs", "checkout-data"} {
		if strings.Contains(s, name) {
			t.Errorf("anonymized recording shows %q", name)
		}
	}
	for _, fact := range []string{"m6g.xlarge", "us-east-1a", `"spot"`, `"arm64"`, "500m", "team", "kubernetes.io/arch"} {
		if !strings.Contains(s, fact) {
			t.Errorf("anonymized recording lost %s", fact)
		}
	}
	p, n := r.Objects[0].Object, r.Objects[1].Object
	podTeam := p["spec"].(map[string]any)["nodeSelector"].(map[string]any)["team"]
	nodeTeam := n["metadata"].(map[string]any)["labels"].(map[string]any)["team"]
	if podTeam != nodeTeam || p["spec"].(map[string]any)["nodeName"] != n["metadata"].(map[string]any)["name"] {
		t.Errorf("hashes differ for the same value: selector %v / label %v", podTeam, nodeTeam)
	}
	owner := p["metadata"].(map[string]any)["ownerReferences"].([]any)[0].(map[string]any)["name"]
	if owner != r.Objects[2].Object["metadata"].(map[string]any)["name"] {
		t.Error("the owner reference no longer names its ReplicaSet")
	}
	back, err := Read(&buf)
	if err != nil || !back.Anonymized || len(back.Objects) != 3 {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

// A .gz recording is gzipped and reads back the same.
func TestFileGzip(t *testing.T) {
	r := &Recording{Version: Version, Start: time.Unix(0, 0).UTC(), Objects: []Object{{Kind: "Node", Object: Kinds[1].Trim(node())}}}
	dir := t.TempDir()
	for _, name := range []string{"r.json", "r.json.gz"} {
		path := dir + "/" + name
		if err := WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if gz := len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b; gz != strings.HasSuffix(name, ".gz") {
			t.Errorf("%s gzipped %v", name, gz)
		}
		back, err := ReadFile(path)
		if err != nil || len(back.Objects) != 1 || back.Objects[0].Kind != "Node" {
			t.Errorf("%s read back %+v, %v", name, back, err)
		}
	}
}

// A label value that is also a quantity or a flag ("1", "true") is kept:
// hashing it would hash a pod's "cpu: 1" request too.
func TestAnonymizeKeepsQuantities(t *testing.T) {
	p := pod()
	md := p["metadata"].(map[string]any)
	md["labels"].(map[string]any)["replicas"] = "1"
	md["labels"].(map[string]any)["canary"] = "true"
	p["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"cpu": "1"}}
	r := &Recording{Version: Version, Objects: []Object{{Kind: "Pod", Object: Kinds[0].Trim(p)}}}
	Anonymize(r, "salt")
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"cpu":"1"`) || !strings.Contains(string(b), `"canary":"true"`) {
		t.Errorf("quantity or flag hashed: %s", b)
	}
}
