package ec2

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AMI families of the EKS-optimized images the endpoint publishes.
const (
	FamilyAL2023       = "al2023"
	FamilyAL2          = "al2"
	FamilyBottlerocket = "bottlerocket"
	FamilyWindows2019  = "windows2019"
	FamilyWindows2022  = "windows2022"
	FamilyWindows2025  = "windows2025"
)

// IsWindows says whether an image family is one of EKS's Windows images.
func IsWindows(family string) bool { return strings.HasPrefix(family, "windows") }

// Image variants: what accelerators an image's drivers serve.
const (
	VariantStandard = "standard"
	VariantNvidia   = "nvidia"
	VariantNeuron   = "neuron"
)

// Owners of the public EKS images. 602401143452 owns the EKS-optimized
// Amazon Linux AMIs in most regions (us-east-1 included); the Bottlerocket
// owner id is what the Bottlerocket images in us-east-1 show (not checked
// against a live account here). Both carry the owner alias "amazon".
const (
	EKSImageOwner          = "602401143452"
	BottlerocketImageOwner = "092701018921"
	WindowsImageOwner      = "801119661308"
	AmazonOwnerAlias       = "amazon"
)

// DefaultKubernetesVersion is the local world's Kubernetes minor version.
const DefaultKubernetesVersion = "1.37"

// Image is one AMI the endpoint knows.
type Image struct {
	ID           string // "ami-0" + 16 hex digits
	Name         string // e.g. amazon-eks-node-al2023-x86_64-standard-1.37-v20261101
	Description  string
	Architecture string // "x86_64" or "arm64"
	// Family and Variant say what the image is (FamilyAL2023, VariantNvidia);
	// empty for images added with AddImage that did not say.
	Family, Variant string
	// Release is the EKS AMI release ("v20261101"), or Bottlerocket's
	// version ("1.50.0").
	Release      string
	OwnerID      string
	OwnerAlias   string // "amazon" for the public EKS images
	Public       bool
	CreationDate time.Time
	// DeprecationTime, when set and past, makes the image deprecated:
	// DescribeImages hides it unless IncludeDeprecated is set.
	DeprecationTime time.Time
	State           string // "available"
	Tags            map[string]string
}

// Deprecated reports whether the image's deprecation time has passed.
func (im Image) Deprecated(now time.Time) bool {
	return !im.DeprecationTime.IsZero() && !im.DeprecationTime.After(now)
}

// Release is one EKS AMI release: every family's images built that day.
type Release struct {
	Version      string    // "v20261101"
	Bottlerocket string    // "1.50.0"
	Date         time.Time // the images' CreationDate
}

// ssmParam is one public SSM parameter pointing at an image.
type ssmParam struct {
	value    string
	version  int64
	modified time.Time
}

var releaseVersion = regexp.MustCompile(`^v(\d{8})$`)

// initialReleases are the releases a new endpoint starts with: the older
// one stays reachable through its pinned parameters (al2023@v20261015).
var initialReleases = []string{"v20261015", "v20261101"}

func (s *Server) initImages() {
	s.images = map[string]*Image{}
	for _, v := range initialReleases {
		if _, err := s.publishLocked(v); err != nil {
			panic(err) // the built-in versions are valid
		}
	}
}

// PublishImageRelease publishes a new EKS AMI release, e.g. "v20261201"
// (it must be newer than the latest): a new image for every family,
// architecture and variant, and the SSM parameters `recommended` (AL2023,
// AL2) and `latest` (Bottlerocket) repointed at them, with the pinned
// parameters of the new release added. The previous images stay available.
// It returns the new images.
func (s *Server) PublishImageRelease(version string) ([]Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publishLocked(version)
}

func (s *Server) publishLocked(version string) ([]Image, error) {
	m := releaseVersion.FindStringSubmatch(version)
	if m == nil {
		return nil, fmt.Errorf("ec2 sim: release %q is not v<yyyymmdd>", version)
	}
	date, err := time.Parse("20060102", m[1])
	if err != nil {
		return nil, fmt.Errorf("ec2 sim: release %q: %v", version, err)
	}
	date = date.Add(6*time.Hour + 12*time.Minute + 34*time.Second)
	br := "1.50.0"
	if n := len(s.releases); n > 0 {
		last := s.releases[n-1]
		if version <= last.Version {
			return nil, fmt.Errorf("ec2 sim: release %s is not newer than %s", version, last.Version)
		}
		var major, minor int
		if _, err := fmt.Sscanf(last.Bottlerocket, "%d.%d.", &major, &minor); err != nil {
			return nil, fmt.Errorf("ec2 sim: bottlerocket version %q: %v", last.Bottlerocket, err)
		}
		br = fmt.Sprintf("%d.%d.0", major, minor+1)
	}
	r := Release{Version: version, Bottlerocket: br, Date: date}
	s.releases = append(s.releases, r)
	var out []Image
	for _, spec := range releaseImages(s.opts.KubernetesVersion, r) {
		im := spec.image
		s.images[im.ID] = &im
		for _, p := range spec.pinned {
			s.ssm[p] = ssmParam{value: im.ID, version: 1, modified: date}
		}
		prev := s.ssm[spec.current]
		s.ssm[spec.current] = ssmParam{value: im.ID, version: prev.version + 1, modified: date}
		out = append(out, cloneImage(im))
	}
	return out, nil
}

type imageSpec struct {
	image   Image
	current string   // the recommended/latest parameter
	pinned  []string // the release's own parameters
}

// releaseImages builds every image of a release with its SSM parameters,
// following the EKS naming (see the EKS user guide, "Retrieve recommended
// Amazon Linux AMI IDs" and "Retrieve recommended Bottlerocket AMI IDs").
func releaseImages(k8s string, r Release) []imageSpec {
	var out []imageSpec
	add := func(family, arch, variant, name, desc, owner, current string, pinned ...string) {
		out = append(out, imageSpec{
			image: Image{
				ID: imageID(name), Name: name, Description: desc, Architecture: arch,
				Family: family, Variant: variant, OwnerID: owner, OwnerAlias: AmazonOwnerAlias, Public: true,
				CreationDate: r.Date, State: "available", Tags: map[string]string{},
				Release: map[bool]string{true: r.Bottlerocket, false: r.Version}[family == FamilyBottlerocket],
			},
			current: current, pinned: pinned,
		})
	}
	eks := "/aws/service/eks/optimized-ami/" + k8s
	for _, av := range [][2]string{{"x86_64", VariantStandard}, {"x86_64", VariantNvidia}, {"x86_64", VariantNeuron},
		{"arm64", VariantStandard}, {"arm64", VariantNvidia}} {
		arch, variant := av[0], av[1]
		name := fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, k8s, r.Version)
		base := fmt.Sprintf("%s/amazon-linux-2023/%s/%s/", eks, arch, variant)
		add(FamilyAL2023, arch, variant, name,
			fmt.Sprintf("EKS-optimized Kubernetes node based on Amazon Linux 2023, (k8s: %s, %s, arch: %s)", k8s, variant, arch),
			EKSImageOwner, base+"recommended/image_id", base+name+"/image_id")
	}
	for _, al2 := range []struct{ arch, variant, path, prefix string }{
		{"x86_64", VariantStandard, "amazon-linux-2", "amazon-eks-node"},
		{"arm64", VariantStandard, "amazon-linux-2-arm64", "amazon-eks-arm64-node"},
		{"x86_64", VariantNvidia, "amazon-linux-2-gpu", "amazon-eks-gpu-node"},
	} {
		name := fmt.Sprintf("%s-%s-%s", al2.prefix, k8s, r.Version)
		base := fmt.Sprintf("%s/%s/", eks, al2.path)
		add(FamilyAL2, al2.arch, al2.variant, name,
			fmt.Sprintf("EKS Kubernetes Worker AMI with AmazonLinux2 image, (k8s: %s, arch: %s)", k8s, al2.arch),
			EKSImageOwner, base+"recommended/image_id", base+name+"/image_id")
	}
	for _, br := range []struct{ flavor, arch, variant string }{
		{"aws-k8s-" + k8s, "x86_64", VariantStandard}, {"aws-k8s-" + k8s, "arm64", VariantStandard},
		{"aws-k8s-" + k8s + "-nvidia", "x86_64", VariantNvidia}, {"aws-k8s-" + k8s + "-nvidia", "arm64", VariantNvidia},
	} {
		sum := sha256.Sum256([]byte(br.flavor + br.arch + r.Bottlerocket))
		name := fmt.Sprintf("bottlerocket-%s-%s-v%s-%s", br.flavor, br.arch, r.Bottlerocket, hex.EncodeToString(sum[:4]))
		base := fmt.Sprintf("/aws/service/bottlerocket/%s/%s/", br.flavor, br.arch)
		add(FamilyBottlerocket, br.arch, br.variant, name,
			fmt.Sprintf("bottlerocket-%s-%s-v%s", br.flavor, br.arch, r.Bottlerocket),
			BottlerocketImageOwner, base+"latest/image_id", base+r.Bottlerocket+"/image_id")
	}
	// EKS's Windows images: Core, x86_64, one parameter per version that
	// always names the latest (no pinned releases); Windows Server 2025
	// from Kubernetes 1.35.
	date := strings.TrimPrefix(r.Version, "v")
	if len(date) == 8 {
		date = date[:4] + "." + date[4:6] + "." + date[6:]
	}
	for _, w := range []struct{ family, year string }{{FamilyWindows2019, "2019"}, {FamilyWindows2022, "2022"}, {FamilyWindows2025, "2025"}} {
		if _, minor, _ := strings.Cut(k8s, "."); w.year == "2025" && minor < "35" && len(minor) == 2 {
			continue
		}
		flavor := fmt.Sprintf("Windows_Server-%s-English-Core-EKS_Optimized-%s", w.year, k8s)
		add(w.family, "x86_64", VariantStandard, flavor+"-"+date,
			fmt.Sprintf("Microsoft Windows Server %s Core optimized for EKS and container orchestration with Kubernetes %s", w.year, k8s),
			WindowsImageOwner, "/aws/service/ami-windows-latest/"+flavor+"/image_id")
	}
	return out
}

// imageID derives a stable AMI id from the image name, so the same release
// has the same ids in every run and after a restart.
func imageID(name string) string {
	sum := sha256.Sum256([]byte("ami:" + name))
	return "ami-0" + hex.EncodeToString(sum[:8])
}

func cloneImage(im Image) Image {
	im.Tags = maps.Clone(im.Tags)
	return im
}

func (im *Image) snapshot() Image { return cloneImage(*im) }

// Image returns the image with the given id.
func (s *Server) Image(id string) (Image, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshotOf(s.images, id, (*Image).snapshot)
}

// ImageArchVariant is Image in the shape the local kubelet asks for: the
// image's EC2 architecture ("x86_64", "arm64") and variant ("standard",
// "nvidia", "neuron").
func (s *Server) ImageArchVariant(id string) (arch, variant string, ok bool) {
	im, ok := s.Image(id)
	return im.Architecture, im.Variant, ok
}

// Images returns every image, newest first (ties by name).
func (s *Server) Images() []Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshots(s.sortedImagesLocked(), (*Image).snapshot)
}

// Releases returns the published EKS AMI releases, oldest first.
func (s *Server) Releases() []Release {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Release(nil), s.releases...)
}

// AddImage adds a custom image (e.g. one a test selects by tag or name).
// Missing fields take defaults: a derived id, owner the account, state
// available, creation now. It returns the image as stored.
func (s *Server) AddImage(im Image) (Image, error) {
	if im.Name == "" {
		return Image{}, fmt.Errorf("ec2 sim: AddImage: Name is required")
	}
	if im.Architecture != "x86_64" && im.Architecture != "arm64" {
		return Image{}, fmt.Errorf("ec2 sim: AddImage %s: architecture %q is not x86_64 or arm64", im.Name, im.Architecture)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if im.ID == "" {
		im.ID = imageID(s.opts.AccountID + "/" + im.Name)
	}
	if _, dup := s.images[im.ID]; dup {
		return Image{}, fmt.Errorf("ec2 sim: AddImage: image %s exists", im.ID)
	}
	if im.OwnerID == "" {
		im.OwnerID = s.opts.AccountID
	}
	if im.State == "" {
		im.State = "available"
	}
	if im.CreationDate.IsZero() {
		im.CreationDate = time.Now().UTC().Truncate(time.Second)
	}
	im.Tags = maps.Clone(im.Tags)
	if im.Tags == nil {
		im.Tags = map[string]string{}
	}
	s.images[im.ID] = &im
	s.customImages = append(s.customImages, im.ID)
	return cloneImage(im), nil
}

// DeprecateImage sets the image's deprecation time (zero: not deprecated).
func (s *Server) DeprecateImage(id string, at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	im, ok := s.images[id]
	if ok {
		im.DeprecationTime = at
	}
	return ok
}

// SSMParameter answers a public SSM parameter the images back (the EKS
// image_id parameters): the AMI id, the parameter's version and when it was
// last changed. sim/ssm serves it.
func (s *Server) SSMParameter(name string) (value string, version int64, modified time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.ssm[name]
	return p.value, p.version, p.modified, ok
}

// SSMParameterNames returns the names SSMParameter answers, sorted.
func (s *Server) SSMParameterNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.ssm)
}

// sortedImagesLocked returns the images newest first, ties by name.
func (s *Server) sortedImagesLocked() []*Image {
	return slices.SortedFunc(maps.Values(s.images), func(a, b *Image) int {
		if c := b.CreationDate.Compare(a.CreationDate); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

var imageIDPattern = regexp.MustCompile(`^ami-[0-9a-f]{8}([0-9a-f]{9})?$`)

var imageFields = fields[*Image]{
	"image-id":            func(im *Image) []string { return []string{im.ID} },
	"name":                func(im *Image) []string { return []string{im.Name} },
	"description":         func(im *Image) []string { return []string{im.Description} },
	"state":               func(im *Image) []string { return []string{im.State} },
	"architecture":        func(im *Image) []string { return []string{im.Architecture} },
	"owner-id":            func(im *Image) []string { return []string{im.OwnerID} },
	"owner-alias":         func(im *Image) []string { return nonEmpty(im.OwnerAlias) },
	"is-public":           func(im *Image) []string { return []string{strconv.FormatBool(im.Public)} },
	"image-type":          func(*Image) []string { return []string{"machine"} },
	"root-device-type":    func(*Image) []string { return []string{"ebs"} },
	"virtualization-type": func(*Image) []string { return []string{"hvm"} },
	"hypervisor":          func(*Image) []string { return []string{"xen"} },
	"platform-details":    func(*Image) []string { return []string{"Linux/UNIX"} },
	"creation-date":       func(im *Image) []string { return []string{ec2Time(im.CreationDate)} },
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func ec2Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *Server) describeImages(f form) (withRequestID, error) {
	ids := f.strings("ImageId")
	max, hasMax, err := f.intParam("MaxResults")
	if err != nil {
		return nil, err
	}
	if hasMax && len(ids) > 0 {
		return nil, newError(http.StatusBadRequest, "InvalidParameterCombination",
			"The parameter imageIdsSet cannot be used with the parameter maxResults")
	}
	includeDeprecated := f.get("IncludeDeprecated") == "true"
	owners := f.strings("Owner")
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.sortedImagesLocked()
	if len(ids) > 0 {
		var missing []string
		byID := map[string]bool{}
		for _, id := range ids {
			if !imageIDPattern.MatchString(id) {
				return nil, newError(http.StatusBadRequest, CodeInvalidAMIIDMalformed, "Invalid id: \"%s\" (expecting \"ami-...\")", id)
			}
			if _, ok := s.images[id]; !ok {
				missing = append(missing, id)
			}
			byID[id] = true
		}
		if len(missing) > 0 {
			return nil, newError(http.StatusBadRequest, CodeInvalidAMIIDNotFound, "The image id '[%s]' does not exist", strings.Join(missing, ", "))
		}
		var kept []*Image
		for _, im := range items {
			if byID[im.ID] {
				kept = append(kept, im)
			}
		}
		items = kept
	}
	if len(owners) > 0 {
		var kept []*Image
		for _, im := range items {
			for _, o := range owners {
				if o == im.OwnerID || (o == "self" && im.OwnerID == s.opts.AccountID) || (o != "" && o == im.OwnerAlias) {
					kept = append(kept, im)
					break
				}
			}
		}
		items = kept
	}
	// Deprecated images are left out unless asked for, except the
	// account's own (EC2 shows an owner its deprecated images).
	now := time.Now()
	var kept []*Image
	for _, im := range items {
		if includeDeprecated || !im.Deprecated(now) || im.OwnerID == s.opts.AccountID {
			kept = append(kept, im)
		}
	}
	items, err = applyFilters(kept, f.filters(), imageFields, func(im *Image) map[string]string { return im.Tags })
	if err != nil {
		return nil, err
	}
	order := map[*Image]uint64{}
	for i, im := range s.sortedImagesLocked() {
		order[im] = uint64(i)
	}
	items, next, err := page(items, func(im *Image) uint64 { return order[im] }, "images", f.get("NextToken"), max, 0, 5, 1000)
	if err != nil {
		return nil, err
	}
	out := &describeImagesResponse{NextToken: next}
	for _, im := range items {
		out.Images = append(out.Images, s.imageXML(im, now))
	}
	return out, nil
}

func (s *Server) imageXML(im *Image, now time.Time) imageXML {
	x := imageXML{
		ImageID: im.ID, ImageLocation: im.OwnerAlias + "/" + im.Name, ImageState: im.State, ImageOwnerID: im.OwnerID,
		CreationDate: ec2Time(im.CreationDate), IsPublic: im.Public, Architecture: im.Architecture, ImageType: "machine",
		Name: im.Name, Description: im.Description, ImageOwnerAlias: im.OwnerAlias, RootDeviceType: "ebs",
		RootDeviceName: "/dev/xvda", VirtualizationType: "hvm", Hypervisor: "xen", EnaSupport: true,
		PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances", Tags: tagSet(im.Tags),
		BlockDevices: []imageBlockDeviceXML{{DeviceName: "/dev/xvda", EBS: imageEBSXML{
			SnapshotID: "snap-0" + strings.TrimPrefix(im.ID, "ami-0"), VolumeSize: 20, DeleteOnTermination: true, VolumeType: "gp3",
		}}},
	}
	if im.OwnerAlias == "" {
		x.ImageLocation = im.OwnerID + "/" + im.Name
	}
	if im.Family == FamilyAL2023 {
		x.BootMode, x.ImdsSupport = "uefi-preferred", "v2.0"
	}
	if IsWindows(im.Family) {
		x.Platform, x.PlatformDetails, x.UsageOperation = "windows", "Windows", "RunInstances:0002"
		x.RootDeviceName, x.BlockDevices[0].DeviceName, x.BlockDevices[0].EBS.VolumeSize = "/dev/sda1", "/dev/sda1", 50
	}
	if !im.DeprecationTime.IsZero() {
		x.DeprecationTime = ec2Time(im.DeprecationTime)
	}
	return x
}
