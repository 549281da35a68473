package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	apiv1 "github.com/joinery/joinery/api/v1"
	"github.com/joinery/joinery/policy/nodeclass"
	"sigs.k8s.io/yaml"
)

// Karpenter's compatibility annotations (pkg/apis/v1/labels.go of both
// projects, v1.0).
const (
	// On v1 NodePools the conversion webhook made: the v1beta1 kubelet
	// settings (JSON), and the v1beta1 nodeClassRef.
	AnnotationKubeletCompatibility      = "compatibility.karpenter.sh/v1beta1-kubelet-conversion"
	AnnotationNodeClassRefCompatibility = "compatibility.karpenter.sh/v1beta1-nodeclass-reference"
	// On v1 EC2NodeClasses converted from amiFamily Ubuntu: which fields the
	// webhook filled in ("amiFamily,blockDeviceMappings[,incompatible]").
	AnnotationUbuntuCompatibility = "compatibility.karpenter.k8s.aws/v1beta1-ubuntu"
	// On v1beta1 EC2NodeClasses: the version of the alias the conversion
	// makes (default latest).
	AnnotationAliasVersionCompatibility = "compatibility.karpenter.k8s.aws/v1-alias-version"
	// Written by Karpenter's stored-version migration.
	AnnotationStoredVersionMigrated = "karpenter.sh/stored-version-migrated"
	annotationLastApplied           = "kubectl.kubernetes.io/last-applied-configuration"
)

// V1beta1HopLimit is v1beta1's default metadataOptions.httpPutResponseHopLimit
// (v1's is 1).
const V1beta1HopLimit = 2

// Input is one manifest document.
type Input struct {
	File   string // where it came from, named in refusals ("" : nowhere)
	Doc    int    // its 1-based document index in File
	Object map[string]interface{}
}

// Change is one edit the conversion made to an object.
type Change struct {
	Object string // "NodePool default"
	Field  string // the field's path ("" : the object itself, told by Why)
	Old    string // the old value, "(unset)" when there was none
	To     string // where the value moved ("" : it stayed at Field)
	New    string // the new value, "(removed)" when removed ("" with To: unchanged)
	Why    string // why, when it is not plain ("" : nothing to add)
}

// String is the change as one line: "NodePool default:
// spec.disruption.consolidationPolicy: WhenUnderutilized ->
// WhenEmptyOrUnderutilized (renamed in v1)".
func (c Change) String() string {
	var s string
	switch {
	case c.Field == "":
		return c.Object + ": " + c.Why
	case c.To != "" && c.New == "":
		s = fmt.Sprintf("%s: %s: %s -> %s", c.Object, c.Field, c.Old, c.To)
	case c.To != "":
		s = fmt.Sprintf("%s: %s: %s -> %s: %s", c.Object, c.Field, c.Old, c.To, c.New)
	default:
		s = fmt.Sprintf("%s: %s: %s -> %s", c.Object, c.Field, c.Old, c.New)
	}
	if c.Why != "" {
		s += " (" + c.Why + ")"
	}
	return s
}

// Refusal is something the conversion cannot do.
type Refusal struct {
	File   string
	Doc    int
	Object string // "karpenter.sh/v1beta1 NodePool default"
	Field  string // "" : the object as a whole
	Reason string
	pos    int // the object's input position, for the order of Result.Refusals
}

func (r Refusal) Error() string {
	s := ""
	if r.File != "" {
		s = fmt.Sprintf("%s document %d: ", r.File, r.Doc)
	}
	s += r.Object + ": "
	if r.Field != "" {
		s += r.Field + ": "
	}
	return s + r.Reason
}

// Result is a conversion's outcome. With any Refusal the Objects are not
// to be used.
type Result struct {
	// Objects are the documents converted, in input order; a class split
	// for its NodePools' kubelet settings is followed by its copies.
	Objects  []map[string]interface{}
	Changes  []Change
	Notes    []string // what the result means for Joinery, worth reading
	Refusals []Refusal
}

// YAML is the objects as multi-document YAML.
func (r Result) YAML() ([]byte, error) {
	var b bytes.Buffer
	for i, o := range r.Objects {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// JSON is the objects as one indented v1 List.
func (r Result) JSON() ([]byte, error) {
	items := make([]interface{}, len(r.Objects))
	for i, o := range r.Objects {
		items[i] = o
	}
	return json.MarshalIndent(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
}

// entry is one object being converted.
type entry struct {
	in                     Input
	pos                    int // input position
	obj                    map[string]interface{}
	apiVersion, kind, name string // as read
	changes                []Change
	refused                bool
	// NodePools: the class they launch from, and the kubelet settings
	// that move to it (nil: none).
	classRef string
	kubelet  *pendingKubelet
	// EC2NodeClasses: the copies split off for NodePools' kubelet settings.
	splits []*entry
}

type pendingKubelet struct {
	field string                 // where it was read
	value map[string]interface{} // canonical (typed and back), never empty
}

func (e *entry) label() string { return e.kind + " " + e.name }

func (e *entry) kubeletField() string {
	if e.kubelet == nil {
		return "spec.template.spec.nodeClassRef"
	}
	return e.kubelet.field
}

type converter struct {
	entries  []*entry
	refusals []Refusal
	notes    []string
}

// Convert converts the documents. It never fails as a whole: what it
// cannot convert is in Result.Refusals, every one of them.
func Convert(inputs []Input) Result {
	c := &converter{}
	for _, in := range inputs {
		c.convert(in)
	}
	c.moveKubelet()
	c.validate()
	var r Result
	for _, e := range c.entries {
		for _, x := range append([]*entry{e}, e.splits...) {
			r.Objects = append(r.Objects, x.obj)
			r.Changes = append(r.Changes, x.changes...)
		}
	}
	sort.SliceStable(c.refusals, func(i, j int) bool { return c.refusals[i].pos < c.refusals[j].pos })
	r.Notes, r.Refusals = c.notes, c.refusals
	return r
}

func (c *converter) refuse(e *entry, field, reason string) {
	e.refused = true
	c.refusals = append(c.refusals, Refusal{File: e.in.File, Doc: e.in.Doc, Object: strings.TrimSpace(e.apiVersion + " " + e.label()), Field: field, Reason: reason, pos: e.pos})
}

func (c *converter) note(e *entry, format string, args ...interface{}) {
	c.notes = append(c.notes, e.label()+": "+fmt.Sprintf(format, args...))
}

func (e *entry) change(field string, old, new interface{}, why string) {
	e.changes = append(e.changes, Change{Object: e.label(), Field: field, Old: show(old), New: show(new), Why: why})
}

func (e *entry) moved(field string, v interface{}, to, why string) {
	e.changes = append(e.changes, Change{Object: e.label(), Field: field, Old: show(v), To: to, Why: why})
}

// unset and removed stand for a missing value in Change.
type marker string

const (
	unset   marker = "(unset)"
	removed marker = "(removed)"
)

func (c *converter) convert(in Input) {
	obj, _ := deepCopy(in.Object).(map[string]interface{})
	if obj == nil {
		obj = map[string]interface{}{}
	}
	e := &entry{in: in, pos: len(c.entries), obj: obj, apiVersion: str(obj["apiVersion"]), kind: str(obj["kind"])}
	e.name, _ = get(obj, "metadata", "name").(string)
	c.entries = append(c.entries, e)
	group, version, _ := strings.Cut(e.apiVersion, "/")
	if group != apiv1.GroupKarpenter && group != apiv1.GroupAWS {
		return // not Karpenter's: passed through
	}
	if e.name == "" {
		c.refuse(e, "metadata.name", "required")
		return
	}
	switch {
	case group == apiv1.GroupKarpenter && version == "v1beta1" && e.kind == "NodePool":
		c.nodePoolV1beta1(e)
	case group == apiv1.GroupKarpenter && version == "v1" && e.kind == "NodePool":
		c.nodePoolV1(e)
	case group == apiv1.GroupAWS && version == "v1beta1" && e.kind == "EC2NodeClass":
		c.classV1beta1(e)
	case group == apiv1.GroupAWS && version == "v1" && e.kind == "EC2NodeClass":
		c.classV1(e)
	case group == apiv1.GroupKarpenter && version == "v1" && e.kind == "NodeClaim":
		c.stripServerFields(e)
	case e.kind == "NodeClaim":
		c.refuse(e, "", "NodeClaims are created by the controller, not applied: remove it from the manifests")
	case version == "v1alpha5" && (e.kind == "Provisioner" || e.kind == "Machine"),
		version == "v1alpha1" && e.kind == "AWSNodeTemplate":
		c.refuse(e, "", "convert to v1beta1 first (Karpenter's karpenter-convert, see its v1beta1 migration guide), then migrate the result")
	default:
		c.refuse(e, "apiVersion", "not a Karpenter kind and version this command converts (karpenter.sh/v1beta1 NodePool, karpenter.k8s.aws/v1beta1 EC2NodeClass, or their v1)")
	}
}

// strict checks the object against a v1beta1 schema: each unknown field
// is refused by path (saying so when it is a v1 field), and a value of the
// wrong type by its field. It returns the typed object (nil when refused).
func (c *converter) strict(e *entry, t reflect.Type, v1 reflect.Type) interface{} {
	if unknown := unknownFields(e.obj, t); len(unknown) > 0 {
		for _, f := range unknown {
			if fieldExists(v1, f) {
				c.refuse(e, f, fmt.Sprintf("a v1 field, not a %s one: if the object is written for v1, its apiVersion is %s/v1",
					e.apiVersion, strings.SplitN(e.apiVersion, "/", 2)[0]))
			} else {
				c.refuse(e, f, fmt.Sprintf("not a field of %s %s, and v1 has no equivalent", e.apiVersion, e.kind))
			}
		}
		return nil
	}
	typed, field, err := decodeTyped(e.obj, t)
	if err != nil {
		c.refuse(e, field, err.Error())
		return nil
	}
	return typed
}

// decodeV1 decodes a converted object strictly as Joinery's v1 type into
// (a pointer to a struct), refusing each unknown field and a wrongly typed
// one by path.
func (c *converter) decodeV1(e *entry, into interface{}) bool {
	t := reflect.TypeOf(into).Elem()
	what := str(e.obj["apiVersion"]) + " " + e.kind
	unknown := unknownFields(e.obj, t)
	for _, f := range unknown {
		c.refuse(e, f, "not a field of "+what)
	}
	if len(unknown) > 0 {
		return false
	}
	typed, field, err := decodeTyped(e.obj, t)
	if err != nil {
		c.refuse(e, field, err.Error()+" (as "+what+")")
		return false
	}
	reflect.ValueOf(into).Elem().Set(reflect.ValueOf(typed).Elem())
	return true
}

// stripServerFields removes what the API server and controllers write:
// status, server-set metadata, kubectl's and Karpenter's bookkeeping
// annotations. Objects read back with `kubectl get -o yaml` carry them.
func (c *converter) stripServerFields(e *entry) {
	if md, ok := e.obj["metadata"].(map[string]interface{}); ok {
		for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			if v, ok := md[f]; ok {
				delete(md, f)
				e.change("metadata."+f, brief(v), removed, "set by the API server")
			}
		}
	}
	for _, a := range []struct{ key, why string }{
		{annotationLastApplied, "kubectl's copy of the object as last applied"},
		{AnnotationStoredVersionMigrated, "written by Karpenter's stored-version migration"},
		{"karpenter.sh/nodepool-hash", "written by the controller"},
		{"karpenter.sh/nodepool-hash-version", "written by the controller"},
		{"karpenter.k8s.aws/ec2nodeclass-hash", "written by the controller"},
		{"karpenter.k8s.aws/ec2nodeclass-hash-version", "written by the controller"},
	} {
		if v, ok := e.annotation(a.key); ok {
			e.removeAnnotation(a.key)
			e.change(annotationPath(a.key), brief(v), removed, a.why)
		}
	}
	if md, ok := e.obj["metadata"].(map[string]interface{}); ok {
		if fs, ok := md["finalizers"].([]interface{}); ok {
			var keep []interface{}
			for _, f := range fs {
				if s := str(f); s == apiv1.FinalizerTermination || s == apiv1.FinalizerNodeClassTermination {
					e.change("metadata.finalizers", s, removed, "added by the controller")
					continue
				}
				keep = append(keep, f)
			}
			if len(keep) == 0 {
				delete(md, "finalizers")
			} else {
				md["finalizers"] = keep
			}
		}
	}
	if v, ok := e.obj["status"]; ok {
		delete(e.obj, "status")
		e.change("status", brief(v), removed, "written by the controller")
	}
}

func annotationPath(key string) string { return "metadata.annotations[" + key + "]" }

func (e *entry) annotation(key string) (string, bool) {
	a, _ := get(e.obj, "metadata", "annotations").(map[string]interface{})
	v, ok := a[key]
	if !ok {
		return "", false
	}
	s, _ := v.(string)
	return s, true
}

// removeAnnotation deletes an annotation, and the annotations map when it
// empties.
func (e *entry) removeAnnotation(key string) {
	md, _ := e.obj["metadata"].(map[string]interface{})
	a, _ := md["annotations"].(map[string]interface{})
	delete(a, key)
	if a != nil && len(a) == 0 {
		delete(md, "annotations")
	}
}

func (c *converter) nodePoolV1beta1(e *entry) {
	typed, _ := c.strict(e, reflect.TypeOf(nodePoolV1beta1{}), reflect.TypeOf(apiv1.NodePool{})).(*nodePoolV1beta1)
	if typed == nil {
		return
	}
	e.obj["apiVersion"] = apiv1.GroupKarpenter + "/v1"
	e.change("apiVersion", e.apiVersion, e.obj["apiVersion"], "")
	c.stripServerFields(e)
	spec := ensure(e.obj, "spec")
	tspec := ensure(spec, "template", "spec")

	d := ensure(spec, "disruption")
	policy := str(d["consolidationPolicy"])
	after, hasAfter := d["consolidateAfter"]
	const p, a = "spec.disruption.consolidationPolicy", "spec.disruption.consolidateAfter"
	switch policy {
	case "", "WhenUnderutilized":
		if hasAfter && str(after) != "Never" {
			c.refuse(e, a, "v1beta1 refuses consolidateAfter with consolidationPolicy WhenUnderutilized (Karpenter never accepted this object): remove it, or use WhenEmpty")
			return
		}
		if policy != "" {
			d["consolidationPolicy"] = apiv1.ConsolidationPolicyWhenEmptyOrUnderutilized
			e.change(p, policy, d["consolidationPolicy"], "renamed in v1")
		}
		if !hasAfter {
			d["consolidateAfter"] = "0s"
			e.change(a, unset, "0s", "required in v1; 0s keeps v1beta1's WhenUnderutilized timing")
		} else {
			c.note(e, "%s Never kept: consolidation stays off, as in v1beta1 (Karpenter's webhook writes 0s, which turns it on)", a)
		}
	case "WhenEmpty":
		if !hasAfter {
			c.refuse(e, a, "required with consolidationPolicy WhenEmpty in v1beta1 (Karpenter never accepted this object)")
			return
		}
	default:
		c.refuse(e, p, fmt.Sprintf("%q is not a v1beta1 policy (WhenEmpty, WhenUnderutilized)", policy))
		return
	}
	if exp, ok := d["expireAfter"]; ok {
		delete(d, "expireAfter")
		tspec["expireAfter"] = exp
		e.moved("spec.disruption.expireAfter", exp, "spec.template.spec.expireAfter", "")
	}

	const r = "spec.template.spec.nodeClassRef"
	ref, _ := tspec["nodeClassRef"].(map[string]interface{})
	if ref == nil {
		c.refuse(e, r, "required: a NodePool names its EC2NodeClass")
		return
	}
	group, kind, name := apiv1.GroupAWS, str(ref["kind"]), str(ref["name"])
	if av := str(ref["apiVersion"]); av != "" {
		g, _, ok := strings.Cut(av, "/")
		if !ok {
			c.refuse(e, r+".apiVersion", fmt.Sprintf("%q is not group/version", av))
			return
		}
		group = g
	}
	if kind == "" {
		kind = "EC2NodeClass"
	}
	if group != apiv1.GroupAWS || kind != "EC2NodeClass" {
		c.refuse(e, r, fmt.Sprintf("%s %s: Joinery launches from karpenter.k8s.aws EC2NodeClasses only", group, kind))
		return
	}
	if name == "" {
		c.refuse(e, r+".name", "required")
		return
	}
	v1ref := map[string]interface{}{"group": group, "kind": kind, "name": name}
	tspec["nodeClassRef"] = v1ref
	e.change(r, ref, v1ref, "v1 requires group and kind; apiVersion is gone")
	e.classRef = name

	if res, ok := tspec["resources"]; ok {
		if rs := typed.Spec.Template.Spec.Resources; rs != nil && len(rs.Requests) > 0 {
			c.refuse(e, "spec.template.spec.resources.requests", "v1beta1 refuses resource requests on a NodePool template too, and v1 has no such field")
			return
		}
		delete(tspec, "resources")
		e.change("spec.template.spec.resources", res, removed, "empty, and no such field in v1")
	}
	if k, ok := tspec["kubelet"]; ok {
		delete(tspec, "kubelet")
		e.setKubelet("spec.template.spec.kubelet", k, typed.Spec.Template.Spec.Kubelet)
	}
}

// setKubelet records kubelet settings to move to the NodePool's class; an
// empty set is just removed.
func (e *entry) setKubelet(field string, raw interface{}, k *kubeletV1beta1) {
	v := canonical(k)
	if len(v) == 0 {
		e.change(field, raw, removed, "empty")
		return
	}
	e.kubelet = &pendingKubelet{field: field, value: v}
}

// canonical is kubelet settings as their JSON object (nil when none).
func canonical(k *kubeletV1beta1) map[string]interface{} {
	if k == nil {
		return nil
	}
	b, err := json.Marshal(k)
	if err != nil {
		return nil
	}
	var m map[string]interface{}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func (c *converter) nodePoolV1(e *entry) {
	c.stripServerFields(e)
	if v, ok := e.annotation(AnnotationNodeClassRefCompatibility); ok {
		e.removeAnnotation(AnnotationNodeClassRefCompatibility)
		e.change(annotationPath(AnnotationNodeClassRefCompatibility), v, removed, "Karpenter's webhook's copy of the v1beta1 nodeClassRef")
	}
	if v, ok := e.annotation(AnnotationKubeletCompatibility); ok {
		e.removeAnnotation(AnnotationKubeletCompatibility)
		k := &kubeletV1beta1{}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(k); err != nil {
			c.refuse(e, annotationPath(AnnotationKubeletCompatibility), "not v1beta1 kubelet settings: "+err.Error())
			return
		}
		e.setKubelet(annotationPath(AnnotationKubeletCompatibility), v, k)
	}
	ref, _ := get(e.obj, "spec", "template", "spec", "nodeClassRef").(map[string]interface{})
	if ref == nil {
		return // refused by validate
	}
	for _, f := range []struct{ key, value string }{{"group", apiv1.GroupAWS}, {"kind", "EC2NodeClass"}} {
		if str(ref[f.key]) == "" {
			ref[f.key] = f.value
			e.change("spec.template.spec.nodeClassRef."+f.key, unset, f.value, "required since Karpenter v1.1")
		}
	}
	e.classRef = str(ref["name"])
}

var aliasFamilies = map[string]bool{"AL2": true, "AL2023": true, "Bottlerocket": true, "Windows2019": true, "Windows2022": true, "Windows2025": true}

func (c *converter) classV1beta1(e *entry) {
	typed, _ := c.strict(e, reflect.TypeOf(ec2NodeClassV1beta1{}), reflect.TypeOf(apiv1.EC2NodeClass{})).(*ec2NodeClassV1beta1)
	if typed == nil {
		return
	}
	e.obj["apiVersion"] = apiv1.GroupAWS + "/v1"
	e.change("apiVersion", e.apiVersion, e.obj["apiVersion"], "")
	c.stripServerFields(e)
	spec := ensure(e.obj, "spec")
	aliasVersion, hasVersion := e.annotation(AnnotationAliasVersionCompatibility)
	if hasVersion {
		e.removeAnnotation(AnnotationAliasVersionCompatibility)
	}
	terms := len(typed.Spec.AMISelectorTerms)
	family := ""
	if typed.Spec.AMIFamily != nil {
		family = *typed.Spec.AMIFamily
	}
	const f, t = "spec.amiFamily", "spec.amiSelectorTerms"
	switch {
	case family == "":
		c.refuse(e, f, "required in v1beta1")
		return
	case aliasFamilies[family] && terms == 0:
		version := "latest"
		if hasVersion {
			version = aliasVersion
		}
		if strings.HasPrefix(family, "Windows") && version != "latest" {
			c.refuse(e, annotationPath(AnnotationAliasVersionCompatibility), fmt.Sprintf("%q: a Windows alias takes only the version latest in v1", version))
			return
		}
		delete(spec, "amiFamily")
		alias := []interface{}{map[string]interface{}{"alias": strings.ToLower(family) + "@" + version}}
		spec["amiSelectorTerms"] = alias
		e.changes = append(e.changes, Change{Object: e.label(), Field: f, Old: family, To: t, New: show(alias),
			Why: "v1 selects the family's EKS-optimized AMI by alias"})
		if hasVersion {
			e.change(annotationPath(AnnotationAliasVersionCompatibility), aliasVersion, removed, "its version is the alias's")
		}
	case aliasFamilies[family]:
		if hasVersion {
			e.change(annotationPath(AnnotationAliasVersionCompatibility), aliasVersion, removed, "used only for an alias; amiSelectorTerms are set")
		}
	case family == "Ubuntu" && terms == 0:
		c.refuse(e, f, "Ubuntu: v1 has no Ubuntu family, and this class selects no AMI: select your Ubuntu AMI in spec.amiSelectorTerms "+
			"(then this command converts it to amiFamily AL2, whose user data Ubuntu shares) or use amiFamily Custom with your own user data")
		return
	case family == "Ubuntu":
		spec["amiFamily"] = apiv1.AMIFamilyAL2
		e.change(f, family, spec["amiFamily"], "v1 dropped Ubuntu; AL2's user data has Ubuntu's format, not guaranteed to stay so")
		if _, ok := spec["blockDeviceMappings"]; !ok {
			root := []interface{}{map[string]interface{}{"deviceName": "/dev/sda1", "rootVolume": true,
				"ebs": map[string]interface{}{"encrypted": true, "volumeType": "gp3", "volumeSize": "20Gi"}}}
			spec["blockDeviceMappings"] = root
			e.change("spec.blockDeviceMappings", unset, root, "Ubuntu's root volume; AL2's default is /dev/xvda")
		}
		if hasVersion {
			e.change(annotationPath(AnnotationAliasVersionCompatibility), aliasVersion, removed, "used only for an alias")
		}
	case family == apiv1.AMIFamilyCustom:
		if terms == 0 {
			c.refuse(e, t, "required with amiFamily Custom")
			return
		}
		if ud := typed.Spec.UserData; ud == nil || !strings.Contains(*ud, apiv1.TaintKeyUnregistered) {
			c.note(e, "amiFamily Custom: Karpenter v1 expects the user data to register the node with the taint %s:NoExecute", apiv1.TaintKeyUnregistered)
		}
	default:
		c.refuse(e, f, fmt.Sprintf("%q is not a v1beta1 family", family))
		return
	}

	if mo := typed.Spec.MetadataOptions; mo == nil || mo.HTTPPutResponseHopLimit == nil {
		ensure(spec, "metadataOptions")["httpPutResponseHopLimit"] = int64(V1beta1HopLimit)
		e.change("spec.metadataOptions.httpPutResponseHopLimit", unset, V1beta1HopLimit,
			"v1beta1's default, kept: v1's is 1, which keeps pods without hostNetwork off IMDS")
	}
	if _, ok := typed.Spec.Tags["eks:eks-cluster-name"]; ok {
		c.refuse(e, "spec.tags[eks:eks-cluster-name]", "restricted in v1: Karpenter sets it to the cluster's name")
	}
}

func (c *converter) classV1(e *entry) {
	c.stripServerFields(e)
	v, ok := e.annotation(AnnotationUbuntuCompatibility)
	if !ok {
		return
	}
	for _, s := range strings.Split(v, ",") {
		if strings.TrimSpace(s) == "incompatible" {
			c.refuse(e, annotationPath(AnnotationUbuntuCompatibility), "Karpenter's webhook converted an Ubuntu class without amiSelectorTerms: "+
				"its placeholder amiSelectorTerms select no AMI; select your Ubuntu AMI in spec.amiSelectorTerms and drop the annotation")
			return
		}
	}
	e.removeAnnotation(AnnotationUbuntuCompatibility)
	e.change(annotationPath(AnnotationUbuntuCompatibility), v, removed, "Karpenter's webhook's record of its Ubuntu conversion; the converted spec is kept")
}

// moveKubelet puts the NodePools' kubelet settings on their classes. The
// NodePools of one class whose settings differ (a pool without any has the
// class's) each need their own class: the group that has the class's
// current settings, else the first pool's group, keeps the class; every
// other group gets a copy named <class>-<its first pool>.
func (c *converter) moveKubelet() {
	classes := map[string]*entry{}
	var order []string
	pools := map[string][]*entry{}
	for _, e := range c.entries {
		switch {
		case e.kind == "EC2NodeClass" && strings.HasPrefix(e.apiVersion, apiv1.GroupAWS+"/"):
			classes[e.name] = e
		case e.kind == "NodePool" && !e.refused && e.classRef != "":
			if e.kubelet != nil && !contains(order, e.classRef) {
				order = append(order, e.classRef)
			}
			pools[e.classRef] = append(pools[e.classRef], e)
		}
	}
	taken := map[string]bool{}
	for _, e := range c.entries {
		if e.kind == "EC2NodeClass" {
			taken[e.name] = true
		}
	}
	for _, name := range order {
		cls := classes[name]
		if cls == nil {
			for _, p := range pools[name] {
				if p.kubelet != nil {
					c.refuse(p, p.kubelet.field, fmt.Sprintf("v1 moved kubelet to the EC2NodeClass: add EC2NodeClass %s's manifest (-f) so it can move there", name))
				}
			}
			continue
		}
		if cls.refused {
			continue
		}
		current, _ := get(cls.obj, "spec", "kubelet").(map[string]interface{})
		groups := kubeletGroups(pools[name], current)
		keep := groups[0]
		for _, g := range groups {
			if g.key == show(current) {
				keep = g
			}
		}
		for _, g := range groups {
			target, targetName := cls, name
			if g != keep {
				if target = c.splitClass(cls, g, taken); target == nil {
					continue
				}
				targetName = target.name
			}
			if g.key != show(current) {
				ensure(target.obj, "spec")["kubelet"] = deepCopy(g.value)
			}
			for _, p := range g.pools {
				if targetName != name {
					ensure(p.obj, "spec", "template", "spec", "nodeClassRef")["name"] = targetName
					p.change("spec.template.spec.nodeClassRef.name", name, targetName, "its nodes drift to the new class")
					p.classRef = targetName
				}
				if p.kubelet != nil {
					p.moved(p.kubelet.field, p.kubelet.value, "EC2NodeClass "+targetName+" spec.kubelet", "v1 keeps kubelet settings on the class")
				}
			}
		}
	}
}

// kubeletGroup is the NodePools of one class that want the same kubelet
// settings (key: value as show writes it).
type kubeletGroup struct {
	key   string
	value map[string]interface{}
	pools []*entry
}

// kubeletGroups groups a class's NodePools by the kubelet settings they
// want (their own, else the class's current ones), in the pools' order.
func kubeletGroups(pools []*entry, current map[string]interface{}) []*kubeletGroup {
	var groups []*kubeletGroup
	for _, p := range pools {
		v := current
		if p.kubelet != nil {
			v = p.kubelet.value
		}
		k := show(v)
		var g *kubeletGroup
		for _, x := range groups {
			if x.key == k {
				g = x
			}
		}
		if g == nil {
			g = &kubeletGroup{key: k, value: v}
			groups = append(groups, g)
		}
		g.pools = append(g.pools, p)
	}
	return groups
}

// splitClass makes the copy of class cls for group g's NodePools, named
// after the first of them; nil (the pools refused) when that name is
// taken.
func (c *converter) splitClass(cls *entry, g *kubeletGroup, taken map[string]bool) *entry {
	name := cls.name
	targetName := name + "-" + g.pools[0].name
	if taken[targetName] {
		for _, p := range g.pools {
			c.refuse(p, p.kubeletField(), fmt.Sprintf("its kubelet settings differ from other NodePools' of EC2NodeClass %s, and the name of its own copy, %s, is taken", name, targetName))
		}
		return nil
	}
	taken[targetName] = true
	obj, _ := deepCopy(cls.obj).(map[string]interface{})
	ensure(obj, "metadata")["name"] = targetName
	target := &entry{in: cls.in, pos: cls.pos, obj: obj, apiVersion: cls.apiVersion, kind: cls.kind, name: targetName}
	cls.splits = append(cls.splits, target)
	var names []string
	for _, p := range g.pools {
		names = append(names, p.name)
	}
	target.changes = append(target.changes, Change{Object: target.label(), Why: fmt.Sprintf(
		"new: a copy of EC2NodeClass %s with spec.kubelet %s, for NodePool %s (v1 keeps kubelet settings on the class: NodePools that share one with different settings need a class each)",
		name, show(g.value), strings.Join(names, ", "))})
	return target
}

// validate decodes every converted Karpenter object strictly as Joinery's
// v1 types and validates NodePools: what does not pass is refused.
func (c *converter) validate() {
	for _, e := range c.entries {
		for _, x := range append([]*entry{e}, e.splits...) {
			if x.refused || !strings.HasPrefix(str(x.obj["apiVersion"]), "karpenter.") {
				continue
			}
			switch x.kind {
			case "NodePool":
				np := &apiv1.NodePool{}
				if !c.decodeV1(x, np) {
					continue
				}
				for _, fe := range np.Validate() {
					c.refuse(x, fe.Field, fe.ErrorBody())
				}
			case "EC2NodeClass":
				nc := &apiv1.EC2NodeClass{}
				if !c.decodeV1(x, nc) {
					continue
				}
				for _, u := range nodeclass.Unsupported(&nc.Spec) {
					c.note(x, "Joinery does not support %s; its NodePools do not launch", u)
				}
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
