package whatif

import (
	"fmt"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/preview/planner"
	"k8s.io/apimachinery/pkg/runtime"
)

// ReadChange reads the NodePools and EC2NodeClasses of manifest files.
// Other kinds are returned as notes and ignored; a bad object (or one of
// an older Karpenter API version) is an error naming file, document,
// object, field and reason; a file with neither kind is an error.
func ReadChange(files ...string) (Change, []string, error) {
	var ch Change
	var notes []string
	docs, errs := planner.ReadFiles(files...)
	for _, d := range docs {
		bad := func(field, reason string) {
			errs = append(errs, planner.ManifestError{File: d.File, Doc: d.Index, Kind: d.Obj.GetKind(), Name: d.Obj.GetName(), Field: field, Reason: reason})
		}
		if advice, old := apiv1.OlderVersion(d.Obj.GetAPIVersion(), d.Obj.GetKind(), d.File); old {
			bad("apiVersion", advice)
			continue
		}
		switch d.Obj.GetKind() {
		case "NodePool":
			np := &apiv1.NodePool{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Obj.Object, np, true); err != nil {
				bad("", err.Error())
				continue
			}
			if fe := np.Validate(); len(fe) > 0 {
				for _, e := range fe {
					bad(e.Field, e.ErrorBody())
				}
				continue
			}
			ch.NodePools = append(ch.NodePools, np)
		case "EC2NodeClass":
			nc := &apiv1.EC2NodeClass{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Obj.Object, nc, true); err != nil {
				bad("", err.Error())
				continue
			}
			ch.NodeClasses = append(ch.NodeClasses, nc)
		default:
			notes = append(notes, fmt.Sprintf("%s document %d: %s %s ignored (what-if reads NodePools and EC2NodeClasses)", d.File, d.Index, d.Obj.GetKind(), d.Obj.GetName()))
		}
	}
	if len(errs) > 0 {
		return ch, notes, fmt.Errorf("bad manifests:\n%s", errs.Error())
	}
	if len(ch.NodePools)+len(ch.NodeClasses) == 0 {
		return ch, notes, fmt.Errorf("%s: no NodePool or EC2NodeClass", strings.Join(files, ", "))
	}
	return ch, notes, nil
}
