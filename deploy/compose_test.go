package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/joinery/joinery/workflows"
	"sigs.k8s.io/yaml"
)

// The compose file cannot be run here (no Docker engine in CI), so its
// structure is checked against the code it starts: the Temporal dev server
// with Joinery's search attributes and a SQLite file on a volume, and the
// worker built from ../Dockerfile with flags worker/main.go defines.

type composeFile struct {
	Name     string                    `json:"name"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes"`
}

type composeService struct {
	Image string `json:"image"`
	User  string `json:"user"`
	Build *struct {
		Context    string `json:"context"`
		Dockerfile string `json:"dockerfile"`
	} `json:"build"`
	Command     []string                  `json:"command"`
	Environment []string                  `json:"environment"`
	Ports       []string                  `json:"ports"`
	Volumes     []string                  `json:"volumes"`
	DependsOn   map[string]map[string]any `json:"depends_on"`
	Healthcheck *struct {
		Test        []string `json:"test"`
		Interval    string   `json:"interval"`
		Timeout     string   `json:"timeout"`
		Retries     int      `json:"retries"`
		StartPeriod string   `json:"start_period"`
	} `json:"healthcheck"`
	Restart string `json:"restart"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../docker-compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	return c
}

// args turns ["--a", "x", "--b=y", "--c"] into {a: x, b: y, c: ""}.
func args(cmd []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(cmd); i++ {
		a := cmd[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok && i+1 < len(cmd) && !strings.HasPrefix(cmd[i+1], "--") {
			val = cmd[i+1]
			i++
		}
		if prev, dup := out[name]; dup {
			out[name] = prev + "," + val
		} else {
			out[name] = val
		}
	}
	return out
}

// splitVolume splits "SRC:DST[:MODE]" where SRC may be ${VAR:-default}.
func splitVolume(v string) (src, dst string) {
	i := 0
	if strings.HasPrefix(v, "${") {
		i = strings.Index(v, "}") + 1
	}
	j := strings.Index(v[i:], ":")
	if j < 0 {
		return v, ""
	}
	src, rest := v[:i+j], v[i+j+1:]
	dst, _, _ = strings.Cut(rest, ":")
	return src, dst
}

func TestComposeTemporal(t *testing.T) {
	c := readCompose(t)
	if len(c.Services) != 2 {
		t.Errorf("services %v, want temporal and worker", c.Services)
	}
	tm, ok := c.Services["temporal"]
	if !ok {
		t.Fatal("no temporal service")
	}
	if !strings.Contains(tm.Image, "temporalio/temporal") {
		t.Errorf("temporal image %q", tm.Image)
	}
	if len(tm.Command) < 2 || tm.Command[0] != "server" || tm.Command[1] != "start-dev" {
		t.Errorf("temporal command %q, want server start-dev ...", tm.Command)
	}
	a := args(tm.Command)
	if a["ip"] != "0.0.0.0" {
		t.Errorf("--ip %q, want 0.0.0.0 (reachable from the worker container)", a["ip"])
	}
	if a["ui-port"] != "8233" {
		t.Errorf("--ui-port %q", a["ui-port"])
	}
	for _, p := range []string{"7233:7233", "8233:8233"} {
		if !slices.Contains(tm.Ports, p) {
			t.Errorf("temporal ports %v lack %s", tm.Ports, p)
		}
	}
	// The SQLite file lives on a named volume declared at the top level.
	db := a["db-filename"]
	found := false
	for _, v := range tm.Volumes {
		src, dst := splitVolume(v)
		if _, named := c.Volumes[src]; named && strings.HasPrefix(db, strings.TrimSuffix(dst, "/")+"/") {
			found = true
		}
	}
	if !found {
		t.Errorf("--db-filename %q is not on a named volume (volumes %v, declared %v)", db, tm.Volumes, c.Volumes)
	}
	var sas []string
	for _, sa := range strings.Split(a["search-attribute"], ",") {
		name, typ, _ := strings.Cut(sa, "=")
		if typ != "Keyword" {
			t.Errorf("search attribute %s: type %q, want Keyword", name, typ)
		}
		sas = append(sas, name)
	}
	if !slices.Equal(sas, workflows.SearchAttributeNames) {
		t.Errorf("search attributes %v, want workflows.SearchAttributeNames %v", sas, workflows.SearchAttributeNames)
	}
	if tm.Healthcheck == nil || len(tm.Healthcheck.Test) == 0 {
		t.Errorf("temporal has no healthcheck (the worker waits for it)")
	}
}

func TestComposeWorker(t *testing.T) {
	c := readCompose(t)
	w, ok := c.Services["worker"]
	if !ok {
		t.Fatal("no worker service")
	}
	if w.Build == nil || w.Build.Context != "." || w.Build.Dockerfile != "Dockerfile" {
		t.Fatalf("worker build %+v, want context . and the repo's Dockerfile", w.Build)
	}
	src, err := os.ReadFile("../worker/main.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`flag\.\w+\("([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		defined[string(m[1])] = true
	}
	a := args(w.Command)
	for name := range a {
		if !defined[name] {
			t.Errorf("worker command passes --%s, which worker/main.go does not define", name)
		}
	}
	for _, f := range []string{"kubeconfig", "temporal-address", "temporal-namespace", "cluster-name", "region", "metrics-addr", "interruption-queue"} {
		if _, ok := a[f]; !ok {
			t.Errorf("worker command lacks --%s", f)
		}
	}
	if a["temporal-address"] != "temporal:7233" {
		t.Errorf("--temporal-address %q, want the temporal service", a["temporal-address"])
	}
	// The kubeconfig flag points at a mounted file; the metrics port is published.
	mounted := false
	for _, v := range w.Volumes {
		src, dst := splitVolume(v)
		if dst == a["kubeconfig"] && strings.Contains(src, "KUBECONFIG") {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("--kubeconfig %q is not mounted from $KUBECONFIG (volumes %v)", a["kubeconfig"], w.Volumes)
	}
	port := strings.TrimPrefix(a["metrics-addr"], ":")
	if !slices.Contains(w.Ports, port+":"+port) {
		t.Errorf("metrics port %s not published (ports %v)", port, w.Ports)
	}
	for _, e := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
		if !slices.Contains(w.Environment, e) {
			t.Errorf("worker environment %v does not pass %s through", w.Environment, e)
		}
	}
	if w.DependsOn["temporal"]["condition"] != "service_healthy" {
		t.Errorf("worker depends_on %v, want temporal service_healthy", w.DependsOn)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(gomod))
	if goVersion == nil {
		t.Fatal("no go directive in go.mod")
	}
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) != 2 {
		t.Fatalf("FROM lines %v, want a build stage and a runtime stage", froms)
	}
	if froms[0][1] != "golang:"+goVersion[1] {
		t.Errorf("build stage %s, want golang:%s (go.mod)", froms[0][1], goVersion[1])
	}
	if !strings.HasPrefix(froms[1][1], "gcr.io/distroless/static") {
		t.Errorf("runtime stage %s, want distroless static", froms[1][1])
	}
	for _, s := range []string{"CGO_ENABLED=0", "GOTOOLCHAIN=local", "./worker", "ENTRYPOINT", "USER 65532"} {
		if !strings.Contains(df, s) {
			t.Errorf("Dockerfile lacks %q", s)
		}
	}
	di, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(di), "\n") {
		l = strings.TrimSpace(l)
		// The worker embeds catalog/data (go:embed): it must reach the build.
		if l == "catalog" || strings.HasPrefix(l, "catalog/") || l == "*" {
			t.Errorf(".dockerignore excludes %q, which the worker build needs", l)
		}
	}
}
