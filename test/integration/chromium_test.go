//go:build integration

package integration

import (
	"context"
	"html"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromiumBinary finds Debian's chromium (hack/chromium.sh installs it).
// Without it the test is skipped, unless JOINERY_TEST_CHROMIUM is set (CI
// sets it), when it fails.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("JOINERY_TEST_CHROMIUM") != "" {
		t.Fatalf("JOINERY_TEST_CHROMIUM is set but chromium is not on PATH: %v", err)
	}
	t.Skip("chromium is not installed: apt-get install chromium (or hack/chromium.sh install) to load the Web UI and Prometheus in a headless browser")
	return ""
}

// dumpDOM loads url in headless Chromium and returns the page's DOM once
// its scripts have run: virtual time (timers) stops at the budget, and
// waits for the page's requests to the world.
func dumpDOM(t *testing.T, ctx context.Context, bin, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=20000", "--dump-dom", url)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// limitedBuffer keeps the first 8 KiB written to it (Chromium's stderr).
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 8192 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

// dumpUntil dumps url's DOM until rendered says the page has drawn its
// data (up to three loads: the first load of a page may beat its data).
func dumpUntil(t *testing.T, ctx context.Context, bin, url string, rendered func(string) bool) string {
	t.Helper()
	var dom string
	for try := 1; try <= 3; try++ {
		start := time.Now()
		dom = dumpDOM(t, ctx, bin, url)
		t.Logf("chromium load %d of %s: %d bytes of DOM in %.1fs", try, url, len(dom), time.Since(start).Seconds())
		if rendered(dom) {
			return dom
		}
	}
	t.Fatalf("%s: not rendered after three loads; DOM text:\n%s", url, domText(dom, 4000))
	return ""
}

var (
	workflowRow = regexp.MustCompile(`(?s)<tr data-testid="workflows-summary-configurable-table-row".*?</tr>`)
	runLink     = regexp.MustCompile(`href="/namespaces/[^/"]+/workflows/([^/"]+)/([^/"]+)/`)
	consoleTbl  = regexp.MustCompile(`(?s)<table[^>]*console_table.*?</table>`)
	tableRow    = regexp.MustCompile(`(?s)<tr><td>(.*?)</td><td>(.*?)</td></tr>`)
	tag         = regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]+>`)
)

func hasWorkflowRows(dom string) bool { return workflowRow.MatchString(dom) }

// webUIRows is workflow id -> run id of the Web UI list's rows, from each
// row's link, when the row's text shows both.
func webUIRows(t *testing.T, dom string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, row := range workflowRow.FindAllString(dom, -1) {
		m := runLink.FindStringSubmatch(row)
		if m == nil {
			t.Errorf("a workflow row without a link to its run: %s", domText(row, 500))
			continue
		}
		id, err := url.PathUnescape(m[1])
		if err != nil {
			t.Fatal(err)
		}
		if text := domText(row, len(row)); !strings.Contains(text, " "+id+" ") || !strings.Contains(text, " "+m[2]+" ") {
			t.Errorf("row of %s (run %s) does not show them: %s", id, m[2], text)
		}
		out[id] = m[2]
	}
	return out
}

// promTables are the rows (element, value) of each table Prometheus' graph
// page shows, one table per prepared expression on the table view.
func promTables(dom string) [][][2]string {
	var out [][][2]string
	for _, tbl := range consoleTbl.FindAllString(dom, -1) {
		rows := [][2]string{}
		for _, m := range tableRow.FindAllStringSubmatch(tbl, -1) {
			rows = append(rows, [2]string{html.UnescapeString(m[1]), html.UnescapeString(m[2])})
		}
		out = append(out, rows)
	}
	return out
}

// domText is the text dom shows, tags dropped and spaces collapsed, cut
// at max bytes.
func domText(dom string, max int) string {
	s := strings.Join(strings.Fields(html.UnescapeString(tag.ReplaceAllString(dom, " "))), " ")
	if len(s) > max {
		s = s[:max]
	}
	return " " + s + " "
}
