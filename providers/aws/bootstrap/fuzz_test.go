package bootstrap

import (
	"encoding/base64"
	"strings"
	"testing"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/pelletier/go-toml/v2"
	"sigs.k8s.io/yaml"
)

// FuzzMergeUserData feeds arbitrary spec.userData to every family: Generate
// never panics, and either returns an error naming spec.userData or output
// that parses back with our part last (MIME) or our settings in place (TOML).
//
//	go test -run xxx -fuzz FuzzMergeUserData -fuzztime 60s ./cloud/bootstrap/
func FuzzMergeUserData(f *testing.F) {
	for _, s := range []string{"", userShell, userMIME, userMIMEAL2, userNodeConfig, userTOML,
		"MIME-Version: 1.0\n", "Content-Type: multipart/mixed; boundary=\"//\"\n\n--//\n\nx\n--//--\n",
		"#cloud-config\nruncmd: [ls]\n", "a: b\n", "[settings.kubernetes.node-taints]\nx = 1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ud string) {
		for _, family := range []string{apiv1.AMIFamilyAL2023, apiv1.AMIFamilyAL2, apiv1.AMIFamilyBottlerocket} {
			o := minimalOptions(family, &ud)
			out, err := Generate(o)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "spec.userData: ") {
					t.Fatalf("%s: error does not name spec.userData: %v", family, err)
				}
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(out)
			if err != nil {
				t.Fatalf("%s: output is not base64: %v", family, err)
			}
			switch family {
			case apiv1.AMIFamilyBottlerocket:
				var doc struct {
					Settings struct {
						Kubernetes struct {
							ClusterName string              `toml:"cluster-name"`
							APIServer   string              `toml:"api-server"`
							NodeTaints  map[string][]string `toml:"node-taints"`
						} `toml:"kubernetes"`
					} `toml:"settings"`
				}
				if err := toml.Unmarshal(raw, &doc); err != nil {
					t.Fatalf("%s: output TOML does not parse: %v\n%s", family, err, raw)
				}
				k := doc.Settings.Kubernetes
				if k.ClusterName != o.Cluster.Name || k.APIServer != o.Cluster.Endpoint || len(k.NodeTaints) != 1 {
					t.Fatalf("%s: our settings lost: %+v", family, k)
				}
			default:
				parts, err := parseMIME(string(raw))
				if err != nil {
					t.Fatalf("%s: output MIME does not parse: %v\n%s", family, err, raw)
				}
				user := 0
				if strings.TrimSpace(ud) != "" {
					if isMIME(ud) {
						up, _ := parseMIME(ud)
						user = len(up)
					} else {
						user = 1
					}
				}
				if len(parts) != user+1 {
					t.Fatalf("%s: %d parts, want %d user parts + ours\n%s", family, len(parts), user, raw)
				}
				last := parts[len(parts)-1]
				if family == apiv1.AMIFamilyAL2023 {
					var nc nodeConfig
					if last.mediaType() != contentTypeNodeConfig || yaml.Unmarshal([]byte(last.body), &nc) != nil || nc.Spec.Cluster.Name != o.Cluster.Name {
						t.Fatalf("%s: last part is not our NodeConfig:\n%s", family, last.body)
					}
				} else if !strings.Contains(last.body, "/etc/eks/bootstrap.sh 'test-cluster'") {
					t.Fatalf("%s: last part is not our bootstrap script:\n%s", family, last.body)
				}
			}
		}
	})
}
