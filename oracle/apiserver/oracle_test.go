// Package oracle runs kube-apiserver's own Service and EndpointSlice REST storage (the
// k8s.io/kubernetes module of one release, as a dependency) over svclab scenarios and prints
// what the apiserver answers for every object, so that svclab's report for the same scenario can
// be compared with it exactly.
//
// It is an ordinary test (the registry's etcd test storage needs a *testing.T): build it with
// build.sh, then run the binary with
//
//	ORACLE_CASES=cases.jsonl ORACLE_OUT=results.jsonl ./apiserver.test -test.run '^TestOracle$'
//
// ORACLE_CASES holds one case a line, {"id": "...", "objects": [ ...objects in stream order... ]};
// ORACLE_OUT receives one result a line, in the same order. README.md describes both.
package oracle

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"

	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/discovery"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	servicestore "k8s.io/kubernetes/pkg/registry/core/service/storage"
	endpointslicestore "k8s.io/kubernetes/pkg/registry/discovery/endpointslice/storage"
	"k8s.io/kubernetes/pkg/registry/registrytest"
)

// release is the k8s.io/kubernetes version this binary was built against; build.sh sets it with
// -ldflags -X (the build information, the fallback, lists no dependencies in a test binary).
var release = ""

func binaryRelease() string {
	if release != "" {
		return release
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// caseIn is one line of ORACLE_CASES.
type caseIn struct {
	ID      string            `json:"id"`
	Objects []json.RawMessage `json:"objects"`
}

// caseOut is one line of ORACLE_OUT.
type caseOut struct {
	ID      string `json:"id"`
	Release string `json:"release"`
	// Error is a problem with the case as a whole (a profile that cannot be applied, a panic of
	// the harness); the objects are still replayed when the cluster can be built.
	Error   *string `json:"error"`
	Results []any   `json:"results"`
	// Notes say what makes part of this case's answer not exactly comparable.
	Notes []string `json:"notes,omitempty"`
	// Millis is the wall time of the case.
	Millis float64 `json:"millis"`
}

// status is what the apiserver answers for a refused request (metav1.Status, the fields a
// client prints).
type status struct {
	Code    int32   `json:"code"`
	Reason  string  `json:"reason"`
	Message string  `json:"message"`
	Causes  []cause `json:"causes"`
}

type cause struct {
	Reason  string `json:"reason"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// objectResult is the answer for one object (EndpointSlice, ServiceCIDR).
type objectResult struct {
	Index     int      `json:"index"`
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Op        string   `json:"op"`
	Outcome   string   `json:"outcome"`
	Status    *status  `json:"status"`
	Warnings  []string `json:"warnings"`
	// Panic is the value of a panic in the storage (the client sees a 500).
	Panic string `json:"panic,omitempty"`
}

// serviceResult adds what the stored (or deleted) Service holds.
type serviceResult struct {
	objectResult
	Type                string   `json:"type"`
	ClusterIPs          []string `json:"clusterIPs"`
	IPFamilies          []string `json:"ipFamilies"`
	IPFamilyPolicy      string   `json:"ipFamilyPolicy"`
	NodePorts           []int32  `json:"nodePorts"`
	HealthCheckNodePort int32    `json:"healthCheckNodePort"`
}

// TestOracle replays every case of ORACLE_CASES.
func TestOracle(t *testing.T) {
	in := os.Getenv("ORACLE_CASES")
	if in == "" {
		t.Skip("ORACLE_CASES is not set")
	}
	quietLogs()
	input, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer input.Close()
	var out io.Writer = os.Stdout
	if path := os.Getenv("ORACLE_OUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	w := bufio.NewWriter(out)
	defer w.Flush()

	// One embedded etcd per API group for the whole batch (the storage codec comes with the
	// group's configuration, as in upstream's own storage tests); every case gets its own key
	// prefix.
	h := &harness{t: t, etcd: map[string]*storagebackend.ConfigForResource{}}

	scanner := bufio.NewScanner(input)
	scanner.Buffer(make([]byte, 1<<20), 256<<20)
	start := time.Now()
	n := 0
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		var c caseIn
		var res caseOut
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			msg := fmt.Sprintf("oracle: cannot read the case: %v", err)
			res = caseOut{Error: &msg, Results: []any{}}
		} else {
			res = h.run(&c)
		}
		res.Release = binaryRelease()
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.WriteByte('\n')
		n++
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	fmt.Fprintf(os.Stderr, "oracle %s: %d cases in %.2fs (%.1f cases/s)\n", binaryRelease(), n, elapsed.Seconds(), float64(n)/elapsed.Seconds())
}

// quietLogs keeps the allocators' and storages' logging out of the way.
func quietLogs() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.Set("logtostderr", "false")
	fs.Set("alsologtostderr", "false")
	fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// harness holds what the cases share: the etcd storage configuration of each API group and
// the case counter that names the key prefixes.
type harness struct {
	t     *testing.T
	etcd  map[string]*storagebackend.ConfigForResource
	cases atomic.Int64
}

// cluster is one case's apiserver: the REST storages over a fresh key prefix and fresh
// allocators.
type cluster struct {
	services  *servicestore.REST
	slices    *endpointslicestore.REST
	allocs    *allocators
	destroyed bool
}

func (c *cluster) destroy() {
	if c.destroyed {
		return
	}
	c.destroyed = true
	if c.services != nil {
		destroy(c.services)
	}
	if c.slices != nil {
		destroy(c.slices)
	}
	if c.allocs != nil {
		c.allocs.destroy()
	}
}

// restOptions is the storage of one resource under the case's own key prefix.
func (h *harness) restOptions(prefix, group, resource string) generic.RESTOptions {
	cfg, ok := h.etcd[group]
	if !ok {
		var server *etcd3testing.EtcdTestServer
		cfg, server = registrytest.NewEtcdStorage(h.t, group)
		h.t.Cleanup(func() { server.Terminate(h.t) })
		h.etcd[group] = cfg
	}
	return generic.RESTOptions{
		StorageConfig:           cfg.ForResource(schema.GroupResource{Group: group, Resource: resource}),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          prefix + "/" + resource,
	}
}

// run replays one case.
func (h *harness) run(c *caseIn) (res caseOut) {
	start := time.Now()
	res = caseOut{ID: c.ID, Results: []any{}}
	var errs []string
	defer func() {
		h.mark("end")
		if p := recover(); p != nil {
			errs = append(errs, fmt.Sprintf("oracle: panic: %v\n%s", p, debug.Stack()))
		}
		if len(errs) > 0 {
			msg := strings.Join(errs, "; ")
			res.Error = &msg
		}
		res.Millis = float64(time.Since(start).Microseconds()) / 1000
	}()

	objects := make([]objectHead, len(c.Objects))
	for i, raw := range c.Objects {
		objects[i] = head(raw)
	}
	prof, perr := readProfile(c.Objects, objects)
	if perr != nil {
		errs = append(errs, perr.Error())
		return res
	}
	if prof.minor != 0 && prof.minor != releaseMinor(binaryRelease()) {
		errs = append(errs, fmt.Sprintf("oracle: the case asks for Kubernetes %s, this binary is %s", prof.version, binaryRelease()))
		return res
	}
	errs = append(errs, applyGates(prof.gates)...)

	h.mark("start")
	n := h.cases.Add(1)
	prefix := fmt.Sprintf("oracle-%d", n)
	cl := &cluster{}
	defer cl.destroy()

	// ServiceCIDR objects are settled before anything else (svclab reads them all up front).
	cidrResults := map[int]*objectResult{}
	allocs, notes, err := newAllocators(h, prefix, prof, c.Objects, objects, cidrResults)
	res.Notes = notes
	if err != nil {
		errs = append(errs, err.Error())
		return res
	}
	cl.allocs = allocs
	h.mark("allocators")

	svcREST, _, _, err := servicestore.NewREST(h.restOptions(prefix, "", "services"), allocs.primary, allocs.ips, allocs.ports, endpointsStub{}, nil, nil)
	if err != nil {
		errs = append(errs, fmt.Sprintf("oracle: NewREST: %v", err))
		return res
	}
	cl.services = svcREST
	for _, o := range objects {
		if o.isEndpointSlice() {
			sliceREST, err := endpointslicestore.NewREST(h.restOptions(prefix, "discovery.k8s.io", "endpointslices"))
			if err != nil {
				errs = append(errs, fmt.Sprintf("oracle: endpointslice NewREST: %v", err))
				return res
			}
			cl.slices = sliceREST
			break
		}
	}
	h.mark("storages")

	for i, raw := range c.Objects {
		o := objects[i]
		switch {
		case o.isService():
			res.Results = append(res.Results, h.service(cl, i, raw, o))
		case o.isEndpointSlice():
			res.Results = append(res.Results, h.endpointSlice(cl, i, raw, o))
		case o.isServiceCIDR():
			if r, ok := cidrResults[i]; ok {
				res.Results = append(res.Results, r)
			}
		}
		h.mark("object")
	}
	return res
}

var timing = os.Getenv("ORACLE_TIMING") != ""
var lastMark time.Time

// mark prints the time since the previous mark (ORACLE_TIMING=1).
func (h *harness) mark(what string) {
	if !timing {
		return
	}
	now := time.Now()
	if !lastMark.IsZero() {
		fmt.Fprintf(os.Stderr, "%-12s %8.2fms\n", what, float64(now.Sub(lastMark).Microseconds())/1000)
	}
	lastMark = now
}

// objectHead is what the harness reads of an object before decoding it.
type objectHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string            `json:"name"`
		GenerateName string            `json:"generateName"`
		Namespace    string            `json:"namespace"`
		Annotations  map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func head(raw json.RawMessage) objectHead {
	var o objectHead
	_ = json.Unmarshal(raw, &o)
	return o
}

func (o objectHead) isService() bool { return o.APIVersion == "v1" && o.Kind == "Service" }
func (o objectHead) isEndpointSlice() bool {
	return o.APIVersion == "discovery.k8s.io/v1" && o.Kind == "EndpointSlice"
}
func (o objectHead) isServiceCIDR() bool {
	return strings.HasPrefix(o.APIVersion, "networking.k8s.io/") && o.Kind == "ServiceCIDR"
}
func (o objectHead) isProfile() bool {
	return o.APIVersion == "svclab.dev/v1alpha1" && o.Kind == "ClusterProfile"
}

// namespace is the request namespace: the object's, `default` when it has none.
func (o objectHead) namespace() string {
	if o.Metadata.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return o.Metadata.Namespace
}

// OperationAnnotation turns a Service document into a delete of that Service (svclab's rule).
const OperationAnnotation = "svclab.dev/operation"

// endpointsStub stands in for the Endpoints storage (1.24 to 1.36: afterDelete deletes the
// Service's Endpoints object) and the EndpointSlice getter (1.37: only the proxy subresource reads
// it). Neither changes what a create, update or delete of a Service answers.
type endpointsStub struct{}

func (endpointsStub) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return nil, apierrors.NewNotFound(api.Resource("endpoints"), name)
}

func (endpointsStub) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return nil, false, apierrors.NewNotFound(api.Resource("endpoints"), name)
}

// GetEndpointSlices is the 1.37 EndpointSliceGetter's method.
func (endpointsStub) GetEndpointSlices(namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	return nil, nil
}

// request is the context of one API request as the handler chain builds it: namespace, request
// info, user, and the deduplicating warning recorder of the real filter.
func request(ns, verb, group, version, resource, name string) context.Context {
	ctx := genericapirequest.NewContext()
	ctx = genericapirequest.WithNamespace(ctx, ns)
	prefix := "apis"
	if group == "" {
		prefix = "api"
	}
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		Verb:              verb,
		APIPrefix:         prefix,
		APIGroup:          group,
		APIVersion:        version,
		Namespace:         ns,
		Resource:          resource,
		Name:              name,
	})
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "svclab-oracle", Groups: []string{user.AllAuthenticated, user.SystemPrivilegedGroup}})
	return ctx
}

// withWarnings runs fn under upstream's own warning filter (deduplication, truncation) and
// returns the warnings the response would carry, in order. A panic in fn is returned as the
// answer a client gets (the panic-recovery filter's 500).
func withWarnings(ctx context.Context, fn func(ctx context.Context)) (warnings []string, panicked string) {
	w := httptest.NewRecorder()
	handler := filters.WithWarningRecorder(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				panicked = fmt.Sprint(p)
			}
		}()
		fn(r.Context())
	}))
	req := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
	handler.ServeHTTP(w, req)
	parsed, _ := utilnet.ParseWarningHeaders(w.Header()["Warning"])
	warnings = []string{}
	for _, p := range parsed {
		warnings = append(warnings, p.Text)
	}
	return warnings, panicked
}

// panicStatus is what a client gets when a request makes the apiserver panic (the
// WithPanicRecovery filter writes this text with a 500; client-go reports it as InternalError).
func panicStatus() *status {
	return &status{Code: 500, Reason: string(metav1.StatusReasonInternalError), Message: "This request caused apiserver to panic. Look in the logs for details.", Causes: []cause{}}
}

// toStatus is the Status the apiserver writes for err (responsewriters.ErrorToAPIStatus).
func toStatus(err error) *status {
	s := responsewriters.ErrorToAPIStatus(err)
	out := &status{Code: s.Code, Reason: string(s.Reason), Message: s.Message, Causes: []cause{}}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			out.Causes = append(out.Causes, cause{Reason: string(c.Type), Field: c.Field, Message: c.Message})
		}
	}
	return out
}

// decode decodes a request body as the create and update handlers do: the strict serializer
// (fieldValidation=Warn, the server's default when the client names none), defaulting and
// conversion to the internal version. Strict-decoding problems become warnings; any other error
// is the 400 the handler answers.
func decode(raw []byte, gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, []string, error) {
	var strict runtime.Serializer
	for _, info := range legacyscheme.Codecs.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			strict = info.StrictSerializer
		}
	}
	if strict == nil || !serverSideFieldValidation() {
		strict = nil
		for _, info := range legacyscheme.Codecs.SupportedMediaTypes() {
			if info.MediaType == runtime.ContentTypeJSON {
				strict = info.Serializer
			}
		}
	}
	decoder := legacyscheme.Codecs.DecoderToVersion(strict, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	obj, got, err := decoder.Decode(raw, &gvk, into)
	var warnings []string
	if err != nil {
		if strictErr, ok := runtime.AsStrictDecodingError(err); ok && obj != nil {
			for _, e := range strictErr.Errors() {
				warnings = append(warnings, e.Error())
			}
		} else {
			kind := gvk.Kind
			if got != nil && got.Kind != "" {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", got.Kind, got.Version, kind, err))
			}
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v", kind, err))
		}
	}
	return obj, warnings, nil
}

// service replays one Service document: a delete when annotated so, an update when the
// Service is stored, a create otherwise.
func (h *harness) service(cl *cluster, index int, raw json.RawMessage, o objectHead) any {
	ns, name := o.namespace(), o.Metadata.Name
	res := &serviceResult{objectResult: objectResult{Index: index, Kind: "Service", Namespace: ns, Name: name, Warnings: []string{}}}
	res.ClusterIPs, res.IPFamilies, res.NodePorts = []string{}, []string{}, []int32{}
	getCtx := request(ns, "get", "", "v1", "services", name)
	exists := false
	if name != "" {
		if _, err := cl.services.Get(getCtx, name, &metav1.GetOptions{}); err == nil {
			exists = true
		}
	}
	var out runtime.Object
	var err error
	var decodeWarnings []string
	switch {
	case o.Metadata.Annotations[OperationAnnotation] == "delete":
		res.Op = "delete"
		ctx := request(ns, "delete", "", "v1", "services", name)
		res.Warnings, res.Panic = withWarnings(ctx, func(ctx context.Context) {
			out, _, err = cl.services.Delete(ctx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
		})
	case exists:
		res.Op = "update"
		var obj runtime.Object
		obj, decodeWarnings, err = decode(raw, schema.GroupVersionKind{Version: "v1", Kind: "Service"}, &api.Service{})
		if err == nil {
			svc := obj.(*api.Service)
			if svc.Namespace == "" {
				svc.Namespace = ns
			}
			ctx := request(ns, "update", "", "v1", "services", name)
			res.Warnings, res.Panic = withWarnings(ctx, func(ctx context.Context) {
				out, _, err = cl.services.Update(ctx, name, rest.DefaultUpdatedObjectInfo(svc), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			})
		}
	default:
		res.Op = "create"
		var obj runtime.Object
		obj, decodeWarnings, err = decode(raw, schema.GroupVersionKind{Version: "v1", Kind: "Service"}, &api.Service{})
		if err == nil {
			svc := obj.(*api.Service)
			if svc.Namespace == "" {
				svc.Namespace = ns
			}
			if err = namespaceLifecycle(svc.Namespace); err == nil {
				ctx := request(ns, "create", "", "v1", "services", "")
				res.Warnings, res.Panic = withWarnings(ctx, func(ctx context.Context) {
					out, err = cl.services.Create(ctx, svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
				})
			}
		}
	}
	res.Warnings = append(decodeWarnings, res.Warnings...)
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	switch {
	case res.Panic != "":
		res.Outcome = "rejected"
		res.Status = panicStatus()
	case err != nil:
		res.Outcome = "rejected"
		res.Status = toStatus(err)
	default:
		res.Outcome = map[string]string{"create": "created", "update": "updated", "delete": "deleted"}[res.Op]
		if svc, ok := out.(*api.Service); ok {
			res.Name = svc.Name
			res.Namespace = svc.Namespace
			res.Type = string(svc.Spec.Type)
			res.ClusterIPs = append(res.ClusterIPs, svc.Spec.ClusterIPs...)
			for _, f := range svc.Spec.IPFamilies {
				res.IPFamilies = append(res.IPFamilies, string(f))
			}
			if svc.Spec.IPFamilyPolicy != nil {
				res.IPFamilyPolicy = string(*svc.Spec.IPFamilyPolicy)
			}
			for _, p := range svc.Spec.Ports {
				res.NodePorts = append(res.NodePorts, p.NodePort)
			}
			res.HealthCheckNodePort = svc.Spec.HealthCheckNodePort
		}
	}
	return res
}

// namespaceLifecycle is kube-apiserver's NamespaceLifecycle admission (on by default; it runs
// in the handler, after decoding and before the REST storage) for a create in a namespace that
// cannot exist: no Namespace has a name that is not a DNS-1123 label, so the plugin's lookup
// finds none and the create is a 404 (k8s.io/apiserver/pkg/admission/plugin/namespace/
// lifecycle/admission.go Admit). The oracle stores no Namespaces and takes every other
// namespace to exist, as svclab does.
func namespaceLifecycle(namespace string) error {
	if len(validation.IsDNS1123Label(namespace)) == 0 {
		return nil
	}
	return apierrors.NewNotFound(api.Resource("namespaces"), namespace)
}

// endpointSlice replays one EndpointSlice document: an update when the slice is stored, a
// create otherwise.
func (h *harness) endpointSlice(cl *cluster, index int, raw json.RawMessage, o objectHead) any {
	ns, name := o.namespace(), o.Metadata.Name
	res := &objectResult{Index: index, Kind: "EndpointSlice", Namespace: ns, Name: name, Warnings: []string{}}
	const group, version, resource = "discovery.k8s.io", "v1", "endpointslices"
	exists := false
	if name != "" {
		if _, err := cl.slices.Get(request(ns, "get", group, version, resource, name), name, &metav1.GetOptions{}); err == nil {
			exists = true
		}
	}
	var out runtime.Object
	obj, decodeWarnings, err := decode(raw, schema.GroupVersionKind{Group: group, Version: version, Kind: "EndpointSlice"}, &discovery.EndpointSlice{})
	if exists {
		res.Op = "update"
	} else {
		res.Op = "create"
	}
	if err == nil {
		slice := obj.(*discovery.EndpointSlice)
		if slice.Namespace == "" {
			slice.Namespace = ns
		}
		if exists {
			ctx := request(ns, "update", group, version, resource, name)
			res.Warnings, res.Panic = withWarnings(ctx, func(ctx context.Context) {
				out, _, err = cl.slices.Update(ctx, name, rest.DefaultUpdatedObjectInfo(slice), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			})
		} else if err = namespaceLifecycle(slice.Namespace); err == nil {
			ctx := request(ns, "create", group, version, resource, "")
			res.Warnings, res.Panic = withWarnings(ctx, func(ctx context.Context) {
				out, err = cl.slices.Create(ctx, slice, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			})
		}
	}
	res.Warnings = append(decodeWarnings, res.Warnings...)
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	switch {
	case res.Panic != "":
		res.Outcome = "rejected"
		res.Status = panicStatus()
	case err != nil:
		res.Outcome = "rejected"
		res.Status = toStatus(err)
	default:
		res.Outcome = map[string]string{"create": "created", "update": "updated"}[res.Op]
		if slice, ok := out.(*discovery.EndpointSlice); ok {
			res.Name = slice.Name
		}
	}
	return res
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
