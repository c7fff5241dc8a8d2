package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.Resource                = (*functionResource)(nil)
	_ resource.ResourceWithConfigure   = (*functionResource)(nil)
	_ resource.ResourceWithImportState = (*functionResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*functionResource)(nil)
)

// NewFunctionResource is the sless_function resource.
func NewFunctionResource() resource.Resource { return &functionResource{} }

type functionResource struct{ client *Client }

type functionModel struct {
	ID                types.String  `tfsdk:"id"`
	Name              types.String  `tfsdk:"name"`
	Runtime           types.String  `tfsdk:"runtime"`
	Entrypoint        types.String  `tfsdk:"entrypoint"`
	Interface         types.String  `tfsdk:"interface"`
	PayloadFormat     types.String  `tfsdk:"payload_format_version"`
	Env               types.Map     `tfsdk:"env"`
	SensitiveEnv      types.Map     `tfsdk:"sensitive_env"`
	MemoryMB          types.Int64   `tfsdk:"memory_mb"`
	CPUMillis         types.Int64   `tfsdk:"cpu_millis"`
	TimeoutS          types.Float64 `tfsdk:"timeout_s"`
	Concurrency       types.Int64   `tfsdk:"concurrency"`
	MinInstances      types.Int64   `tfsdk:"min_instances"`
	MaxInstances      types.Int64   `tfsdk:"max_instances"`
	Egress            types.List    `tfsdk:"egress"`
	Auth              types.String  `tfsdk:"auth"`
	CallbackURL       types.String  `tfsdk:"callback_url"`
	CallbackSecret    types.String  `tfsdk:"callback_secret"`
	Secrets           types.Map     `tfsdk:"secrets"`
	SourceDir         types.String  `tfsdk:"source_dir"`
	ZipFile           types.String  `tfsdk:"zip_file"`
	BuildTimeoutSec   types.Int64   `tfsdk:"build_timeout_sec"`
	WaitTimeoutSec    types.Int64   `tfsdk:"wait_timeout_sec"`
	SHA256            types.String  `tfsdk:"sha256"`
	Phase             types.String  `tfsdk:"phase"`
	Message           types.String  `tfsdk:"message"`
	URL               types.String  `tfsdk:"url"`
	ValidationVerdict types.String  `tfsdk:"validation_verdict"`
	Version           types.String  `tfsdk:"version"`
	Traffic           types.List    `tfsdk:"traffic"`
}

// trafficType is the object type of one traffic block.
var trafficType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"version": types.StringType,
	"percent": types.Int64Type,
}}

// maxTrafficTargets is the gateway's bound (sless/models/functions.py MAX_TRAFFIC_TARGETS).
const maxTrafficTargets = 4

// Defaults of the gateway's FunctionSpec (sless/models/functions.py); the schema uses the same so
// that an omitted attribute plans no diff against what the gateway reports.
const (
	defaultRuntime          = "python3.11"
	defaultEntrypoint       = "handler.handle"
	defaultMemoryMB         = 128
	defaultCPUMillis        = 500
	defaultTimeoutS         = 30.0
	defaultConcurrency      = 4
	defaultMinInstances     = 0
	defaultMaxInstances     = 4
	defaultAuth             = "public"
	defaultBuildTimeoutSec  = 600
	defaultWaitTimeoutSec   = 900
	functionNameDescription = "Function name: a DNS-1123 label (lowercase letters, digits, '-'; at most 63). Changing it replaces the function."
)

func (r *functionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_function"
}

func (r *functionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A function in the tenant's namespace: its spec and its code. Create and update put the spec, " +
			"upload the code (a zip of `source_dir`, or `zip_file`) when its sha256 changed, and wait until the " +
			"function is `Ready`. A rejected upload fails the apply with the validation findings.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "The function's name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   functionNameDescription,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{nameValidator()},
			},
			"runtime": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:     stringdefault.StaticString(defaultRuntime),
				Description: "`python3.11` or `nodejs20`. Default `python3.11`.",
				Validators:  []validator.String{stringvalidator.OneOf("python3.11", "nodejs20")},
			},
			"entrypoint": schema.StringAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{interfaceEntrypoint{}},
				Description: "`module.function` of the handler. Default: the interface's own, " +
					"`handler.handle` (`handle` in `handler.py` / `handler.js`) for `sless`.",
			},
			"interface": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(defaultInterface),
				Description: "The contract the handler is written to: `sless` (default), `lambda`, " +
					"`openfaas`, `knative`, or `asgi` / `wsgi` (Python only). See docs/migrating.md.",
				Validators: []validator.String{stringvalidator.OneOf(interfaceNames()...)},
			},
			"payload_format_version": schema.StringAttribute{
				Optional:    true,
				Description: "`lambda` only: API Gateway's event shape, `2.0` (the default) or `1.0`.",
				Validators:  []validator.String{stringvalidator.OneOf("1.0", "2.0")},
			},
			"env": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				Default:     mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
				Description: "Environment variables of the function. Names starting with `SLESS_`, `LD_`, `PYTHON` or `NODE_` are reserved.",
			},
			"sensitive_env": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true, Sensitive: true,
				Default:     mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
				Description: "Environment variables whose values are secrets: merged with `env` (a name may not be in both) and hidden in plans and output.",
			},
			"memory_mb": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultMemoryMB),
				Description: "Memory limit in MiB (32-4096). Default 128.",
				Validators:  []validator.Int64{int64validator.Between(32, 4096)},
			},
			"cpu_millis": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultCPUMillis),
				Description: "CPU limit in thousandths of a core (50-4000). Default 500.",
				Validators:  []validator.Int64{int64validator.Between(50, 4000)},
			},
			"timeout_s": schema.Float64Attribute{
				Optional: true, Computed: true,
				Default:     float64default.StaticFloat64(defaultTimeoutS),
				Description: "Invocation timeout in seconds (up to 900). Default 30.",
			},
			"concurrency": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultConcurrency),
				Description: "Concurrent invocations per instance (1-1000), the autoscaling target: instances grow when the calls in flight exceed instances x concurrency. Default 4.",
				Validators:  []validator.Int64{int64validator.Between(1, 1000)},
			},
			"min_instances": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultMinInstances),
				Description: "Workers kept warm (0-10). Default 0.",
				Validators:  []validator.Int64{int64validator.Between(0, 10)},
			},
			"max_instances": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultMaxInstances),
				Description: "Instances (workers or pods) the function may scale to (1-100, at most the tenant's max_instances quota, at least min_instances). Calls beyond max_instances x concurrency queue briefly, then get 429. Default 4.",
				Validators:  []validator.Int64{int64validator.Between(1, 100)},
			},
			"egress": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				Default:     listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{})),
				Description: "Outbound connections allowed, as `host:port` or `CIDR:port` (at most 32). Empty (the default): no network.",
			},
			"auth": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:     stringdefault.StaticString(defaultAuth),
				Description: "`public` (anyone may call `/fn/...`) or `token` (callers need the tenant's token). Default `public`.",
				Validators:  []validator.String{stringvalidator.OneOf("public", "token")},
			},
			"callback_url": schema.StringAttribute{
				Optional: true,
				Description: "`http://` or `https://` URL POSTed a JSON document when an asynchronous invocation ends " +
					"(succeeded, failed or dead-lettered). Its `host:port` must be allowed by `egress`; loopback, " +
					"link-local and metadata addresses are always refused. No credentials in the URL (at most 2048 characters).",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 2048)},
			},
			"callback_secret": schema.StringAttribute{
				Optional: true,
				Description: "Name of a secret of the namespace whose value signs callbacks: " +
					"`X-Sless-Signature: sha256=<HMAC-SHA256 of \"<X-Sless-Timestamp>.<body>\">`.",
			},
			"secrets": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				Default: mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
				Description: "Secrets of the namespace given to the function as environment variables: secret name → " +
					"variable name, e.g. `{ dbpass = \"DB_PASSWORD\" }` (at most 16). Only names: values are stored with " +
					"`PUT .../secrets/{name}` (`sless secret put`) and never reach the Terraform state. A secret that does " +
					"not exist fails the apply (422); a new value restarts the function's workers.",
			},
			"source_dir": schema.StringAttribute{
				Optional: true,
				Description: "Directory with the function's code, zipped in memory deterministically (sorted entries, fixed " +
					"timestamps and modes; `.git`, `__pycache__`, `*.pyc`, `.terraform` left out), so the same tree " +
					"always gives the same `sha256`. Exactly one of `source_dir` and `zip_file`.",
				Validators: []validator.String{stringvalidator.ExactlyOneOf(path.MatchRoot("source_dir"), path.MatchRoot("zip_file"))},
			},
			"zip_file": schema.StringAttribute{
				Optional:    true,
				Description: "Path of a zip archive with the function's code, uploaded as is. Exactly one of `source_dir` and `zip_file`.",
			},
			"build_timeout_sec": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultBuildTimeoutSec),
				Description: "How long the function may stay in phase `Building` (installing dependencies, checking the handler) before the apply fails. Default 600.",
				Validators:  []validator.Int64{int64validator.AtLeast(1)},
			},
			"wait_timeout_sec": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:     int64default.StaticInt64(defaultWaitTimeoutSec),
				Description: "How long create/update waits in all for the function to become `Ready`. Default 900.",
				Validators:  []validator.Int64{int64validator.AtLeast(1)},
			},
			"sha256": schema.StringAttribute{
				Computed:    true,
				Description: "sha256 of the uploaded archive. Planned from the local code, so a code change (or code uploaded outside Terraform) shows as an in-place update.",
			},
			"phase": schema.StringAttribute{
				Computed:    true,
				Description: "`Pending`, `Validating` (held for provider review), `Rejected`, `Building`, `Ready` or `Failed`.",
			},
			"message": schema.StringAttribute{
				Computed:    true,
				Description: "The status message (why a function failed or is held).",
			},
			"url": schema.StringAttribute{
				Computed:      true,
				Description:   "Public invocation URL, `<endpoint>/fn/<namespace>/<name>`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"validation_verdict": schema.StringAttribute{
				Computed:    true,
				Description: "Verdict of the last upload's validation: `allow`, `review` or `reject`.",
			},
			"version": schema.StringAttribute{
				Computed: true,
				Description: "The function's current version (`v1`, `v2`, ...): every upload, and every spec change " +
					"of what runs, is a new immutable version. `GET .../versions` (`sless versions`) lists them.",
			},
		},
		Blocks: map[string]schema.Block{
			"traffic": schema.ListNestedBlock{
				Description: "Split the calls between versions (like Knative's traffic blocks): each block gives " +
					"`percent` of the calls to `version`; the percents add up to 100, at most 4 blocks. No block: every " +
					"call goes to the current version. A version that is 0 % stays reachable as " +
					"`/fn/<namespace>/<name>@<version>`. When the code changes, the new version is uploaded with 0 % " +
					"and the split is put afterwards, so the new code never gets more than configured.",
				Validators: []validator.List{listvalidator.SizeAtMost(maxTrafficTargets)},
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"version": schema.StringAttribute{
							Required:    true,
							Description: "A version of the function, e.g. `v3`.",
							Validators: []validator.String{stringvalidator.RegexMatches(
								regexp.MustCompile(`^v[1-9][0-9]{0,8}$`), "must be a version such as v3")},
						},
						"percent": schema.Int64Attribute{
							Required:    true,
							Description: "Percent of the calls (0-100).",
							Validators:  []validator.Int64{int64validator.Between(0, 100)},
						},
					},
				},
			},
		},
	}
}

// trafficFromModel is the model's traffic blocks as the API's list.
func trafficFromModel(ctx context.Context, list types.List) ([]TrafficTarget, diag.Diagnostics) {
	out := []TrafficTarget{}
	if list.IsNull() || list.IsUnknown() {
		return out, nil
	}
	var blocks []struct {
		Version types.String `tfsdk:"version"`
		Percent types.Int64  `tfsdk:"percent"`
	}
	diags := list.ElementsAs(ctx, &blocks, false)
	for _, b := range blocks {
		out = append(out, TrafficTarget{Version: b.Version.ValueString(), Percent: b.Percent.ValueInt64()})
	}
	return out, diags
}

func trafficValue(targets []TrafficTarget) types.List {
	elems := make([]attr.Value, 0, len(targets))
	for _, t := range targets {
		elems = append(elems, types.ObjectValueMust(trafficType.AttrTypes, map[string]attr.Value{
			"version": types.StringValue(t.Version),
			"percent": types.Int64Value(t.Percent),
		}))
	}
	return types.ListValueMust(trafficType, elems)
}

func sameTraffic(a, b []TrafficTarget) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (r *functionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	c, problem := clientFrom(req.ProviderData)
	if problem != "" {
		resp.Diagnostics.AddError("Provider not configured", problem)
		return
	}
	r.client = c
}

// ModifyPlan plans sha256 from the local code, so that changed code (or code changed
// outside Terraform) is an in-place update and an unchanged tree is no diff at all.
func (r *functionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan functionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *functionModel
	if !req.State.Raw.IsNull() {
		state = &functionModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	resp.Diagnostics.Append(checkEnvOverlap(ctx, plan.Env, plan.SensitiveEnv)...)
	if plan.SourceDir.IsUnknown() || plan.ZipFile.IsUnknown() {
		plan.SHA256 = types.StringUnknown()
	} else {
		code, err := LoadCode(plan.SourceDir.ValueString(), plan.ZipFile.ValueString())
		if err != nil {
			resp.Diagnostics.AddError("Cannot read the function's code", err.Error())
			return
		}
		plan.SHA256 = types.StringValue(SHA256Hex(code))
	}
	changed := state == nil || !plan.SHA256.Equal(state.SHA256) || !req.Plan.Raw.Equal(req.State.Raw)
	if changed {
		plan.Phase = types.StringUnknown()
		plan.Message = types.StringUnknown()
		plan.ValidationVerdict = types.StringUnknown()
		plan.Version = types.StringUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func checkEnvOverlap(ctx context.Context, env, secret types.Map) diag.Diagnostics {
	var diags diag.Diagnostics
	if env.IsUnknown() || secret.IsUnknown() || env.IsNull() || secret.IsNull() {
		return diags
	}
	for k := range secret.Elements() {
		if _, ok := env.Elements()[k]; ok {
			diags.AddAttributeError(path.Root("sensitive_env"), "Environment variable set twice",
				fmt.Sprintf("%q is in both env and sensitive_env", k))
		}
	}
	return diags
}

// specFromModel is the PUT body for the model.
func specFromModel(ctx context.Context, m *functionModel) (FunctionSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	env := map[string]string{}
	for _, src := range []types.Map{m.Env, m.SensitiveEnv} {
		if src.IsNull() || src.IsUnknown() {
			continue
		}
		var part map[string]string
		diags.Append(src.ElementsAs(ctx, &part, false)...)
		for k, v := range part {
			env[k] = v
		}
	}
	egress := []string{}
	if !m.Egress.IsNull() && !m.Egress.IsUnknown() {
		diags.Append(m.Egress.ElementsAs(ctx, &egress, false)...)
	}
	secrets := []SecretRef{}
	if !m.Secrets.IsNull() && !m.Secrets.IsUnknown() {
		var named map[string]string
		diags.Append(m.Secrets.ElementsAs(ctx, &named, false)...)
		for name, variable := range named {
			secrets = append(secrets, SecretRef{Name: name, Env: variable})
		}
		sort.Slice(secrets, func(i, j int) bool { return secrets[i].Name < secrets[j].Name })
	}
	traffic, d := trafficFromModel(ctx, m.Traffic)
	diags.Append(d...)
	spec := FunctionSpec{
		Runtime:    m.Runtime.ValueString(),
		Entrypoint: m.Entrypoint.ValueString(),
		Interface:  m.Interface.ValueString(),
		Env:        env,
		Egress:     egress,
		Auth:       m.Auth.ValueString(),
		Secrets:    secrets,
		Traffic:    traffic,
	}
	if !m.PayloadFormat.IsNull() && !m.PayloadFormat.IsUnknown() {
		v := m.PayloadFormat.ValueString()
		spec.PayloadFormatVersion = &v
	}
	if !m.CallbackURL.IsNull() && !m.CallbackURL.IsUnknown() {
		v := m.CallbackURL.ValueString()
		spec.CallbackURL = &v
	}
	if !m.CallbackSecret.IsNull() && !m.CallbackSecret.IsUnknown() {
		v := m.CallbackSecret.ValueString()
		spec.CallbackSecret = &v
	}
	if !m.MemoryMB.IsNull() {
		v := m.MemoryMB.ValueInt64()
		spec.MemoryMB = &v
	}
	if !m.CPUMillis.IsNull() {
		v := m.CPUMillis.ValueInt64()
		spec.CPUMillis = &v
	}
	if !m.TimeoutS.IsNull() {
		v := m.TimeoutS.ValueFloat64()
		spec.TimeoutS = &v
	}
	if !m.Concurrency.IsNull() {
		v := m.Concurrency.ValueInt64()
		spec.Concurrency = &v
	}
	if !m.MinInstances.IsNull() {
		v := m.MinInstances.ValueInt64()
		spec.MinInstances = &v
	}
	if !m.MaxInstances.IsNull() {
		v := m.MaxInstances.ValueInt64()
		spec.MaxInstances = &v
	}
	return spec, diags
}

// applyRemote copies what the gateway reports into the model. Env keys that the prior
// model had in sensitive_env stay there; every other key goes to env.
func applyRemote(ctx context.Context, m *functionModel, f *Function) diag.Diagnostics {
	var diags diag.Diagnostics
	secretKeys := map[string]bool{}
	if !m.SensitiveEnv.IsNull() && !m.SensitiveEnv.IsUnknown() {
		for k := range m.SensitiveEnv.Elements() {
			secretKeys[k] = true
		}
	}
	plain := map[string]attr.Value{}
	secret := map[string]attr.Value{}
	for k, v := range f.Spec.Env {
		if secretKeys[k] {
			secret[k] = types.StringValue(v)
		} else {
			plain[k] = types.StringValue(v)
		}
	}
	m.ID = types.StringValue(f.Name)
	m.Name = types.StringValue(f.Name)
	m.Runtime = types.StringValue(f.Spec.Runtime)
	m.Entrypoint = types.StringValue(f.Spec.Entrypoint)
	m.Interface = types.StringValue(f.Spec.Interface)
	if m.Interface.ValueString() == "" {
		m.Interface = types.StringValue(defaultInterface) // a gateway older than interfaces
	}
	m.PayloadFormat = types.StringPointerValue(f.Spec.PayloadFormatVersion)
	m.Env = types.MapValueMust(types.StringType, plain)
	m.SensitiveEnv = types.MapValueMust(types.StringType, secret)
	m.MemoryMB = types.Int64Value(f.Spec.MemoryMB)
	m.CPUMillis = types.Int64Value(f.Spec.CPUMillis)
	m.TimeoutS = types.Float64Value(f.Spec.TimeoutS)
	m.Concurrency = types.Int64Value(f.Spec.Concurrency)
	m.MinInstances = types.Int64Value(f.Spec.MinInstances)
	m.MaxInstances = types.Int64Value(f.Spec.MaxInstances)
	egress := make([]attr.Value, 0, len(f.Spec.Egress))
	for _, e := range f.Spec.Egress {
		egress = append(egress, types.StringValue(e))
	}
	m.Egress = types.ListValueMust(types.StringType, egress)
	m.Auth = types.StringValue(f.Spec.Auth)
	m.CallbackURL = types.StringPointerValue(f.Spec.CallbackURL)
	m.CallbackSecret = types.StringPointerValue(f.Spec.CallbackSecret)
	secrets := map[string]attr.Value{}
	for _, ref := range f.Spec.Secrets {
		secrets[ref.Name] = types.StringValue(ref.Env)
	}
	m.Secrets = types.MapValueMust(types.StringType, secrets)
	if f.Spec.Code != nil {
		m.SHA256 = types.StringValue(f.Spec.Code.SHA256)
	} else {
		m.SHA256 = types.StringValue("")
	}
	m.Traffic = trafficValue(f.Spec.Traffic)
	m.Version = types.StringValue(f.Version)
	m.Phase = types.StringValue(f.Status.Phase)
	m.Message = types.StringValue(f.Status.Message)
	m.URL = types.StringValue(f.URL)
	m.ValidationVerdict = types.StringValue(f.Status.Verdict())
	if m.BuildTimeoutSec.IsNull() || m.BuildTimeoutSec.IsUnknown() {
		m.BuildTimeoutSec = types.Int64Value(defaultBuildTimeoutSec)
	}
	if m.WaitTimeoutSec.IsNull() || m.WaitTimeoutSec.IsUnknown() {
		m.WaitTimeoutSec = types.Int64Value(defaultWaitTimeoutSec)
	}
	return diags
}

func (r *functionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan functionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.deploy(ctx, &plan, &resp.State, resp.Private, &resp.Diagnostics, true, lastRead{})
}

func (r *functionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan functionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// the version Terraform last read: a change made since by someone else is a 412, shown
	// as drift, never overwritten
	etag, d := req.Private.GetKey(ctx, etagKey)
	resp.Diagnostics.Append(d...)
	read, d := req.Private.GetKey(ctx, specKey)
	resp.Diagnostics.Append(d...)
	var prior functionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	traffic, d := trafficFromModel(ctx, prior.Traffic)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	last := lastRead{etag: string(etag), spec: string(read), traffic: traffic}
	r.deploy(ctx, &plan, &resp.State, resp.Private, &resp.Diagnostics, false, last)
}

type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// privateSetter is the resource's private state (kept by Terraform, never shown).
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// etagKey holds, in private state, the function's ETag when Terraform last read it (a
// JSON string: the ETag's own quotes); specKey a digest of the spec it read then.
const (
	etagKey = "etag"
	specKey = "spec_sha256"
)

// lastRead is what Terraform last read of the function (empty: nothing, e.g. a state
// written by an older provider: the update then sends no If-Match).
type lastRead struct {
	etag string
	spec string // a JSON string: the hex digest of the spec
	// the traffic split as last read: kept until the new code is uploaded
	traffic []TrafficTarget
}

// specDigest is a digest of the spec as the gateway returns it; the resource_version
// also changes with the status (a build progressing), the spec only when someone writes it.
func specDigest(f *Function) string {
	data, _ := json.Marshal(f.Spec)
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func rememberETag(ctx context.Context, private privateSetter, f *Function) diag.Diagnostics {
	if private == nil || f.ETag() == "" {
		return nil
	}
	diags := private.SetKey(ctx, etagKey, []byte(f.ETag()))
	diags.Append(private.SetKey(ctx, specKey, []byte(specDigest(f)))...)
	return diags
}

// putIfUnchanged puts the spec with If-Match. A 412 whose only cause is the status (the
// spec is still the one Terraform read: a build went on meanwhile) is retried with the
// new version; a changed spec is drift, reported and never overwritten.
func (r *functionResource) putIfUnchanged(ctx context.Context, name string, spec FunctionSpec, last lastRead) (*Function, bool, error) {
	etag := last.etag
	for attempt := 0; ; attempt++ {
		f, err := r.client.PutFunction(ctx, name, spec, etag)
		if !IsPreconditionFailed(err) || attempt >= 5 {
			return f, false, err
		}
		current, getErr := r.client.GetFunction(ctx, name)
		if getErr != nil {
			return nil, false, getErr
		}
		if last.spec == "" || specDigest(current) != last.spec {
			return nil, true, err
		}
		etag = current.ETag()
	}
}

// deploy puts the spec, uploads the code if its sha256 is not what the gateway has, and
// waits for Ready. On failure after the function exists it records what the gateway
// reports, so a failed create leaves a tainted resource and a failed update a state that
// plans the change again.
func (r *functionResource) deploy(ctx context.Context, plan *functionModel, state stateSetter, private privateSetter, diags *diag.Diagnostics, creating bool, last lastRead) {
	name := plan.Name.ValueString()
	code, err := LoadCode(plan.SourceDir.ValueString(), plan.ZipFile.ValueString())
	if err != nil {
		diags.AddError("Cannot read the function's code", err.Error())
		return
	}
	sha := SHA256Hex(code)
	spec, d := specFromModel(ctx, plan)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	if creating {
		if _, err := r.client.GetFunction(ctx, name); err == nil {
			diags.AddError("Function already exists",
				fmt.Sprintf("A function %q already exists in namespace %s. Import it with: terraform import <address> %s",
					name, r.client.Namespace, name))
			return
		} else if !IsNotFound(err) {
			diags.AddError("Cannot read function "+name, err.Error())
			return
		}
	}
	// the split is put after the upload: the new code's version does not exist before it
	wanted := spec.Traffic
	first := spec
	first.Traffic = last.traffic
	f, drifted, err := r.putIfUnchanged(ctx, name, first, last)
	if drifted {
		diags.AddError("Function "+name+" was changed outside Terraform",
			"It changed since Terraform last read it (HTTP 412), and was not overwritten."+
				" Run terraform plan again to see the drift, then apply.")
		return
	}
	if err != nil {
		diags.AddError("Cannot put function "+name, apiMessage(err))
		return
	}
	// record the failure state from here on: the function exists
	fail := func(summary, detail string) {
		diags.AddError(summary, detail)
		if latest, err := r.client.GetFunction(ctx, name); err == nil {
			failed := *plan
			applyRemote(ctx, &failed, latest)
			diags.Append(state.Set(ctx, &failed)...)
		}
	}
	if f.Spec.Code == nil || f.Spec.Code.SHA256 != sha || f.Status.Phase == "Failed" || f.Status.Phase == "Rejected" {
		percent := -1 // every call to the new version
		if len(wanted) > 0 && f.Version != "" {
			percent = 0 // a canary: no call until the split below gives it its share
		}
		up, err := r.client.UploadWithTraffic(ctx, name, code, percent)
		if err != nil {
			if report, ok := RejectedReport(err); ok {
				fail("The upload of function "+name+" was rejected by validation",
					apiMessage(err)+"\n"+FormatFindings(*report))
				return
			}
			fail("Cannot upload the code of function "+name, apiMessage(err))
			return
		}
		if up.SHA256 != sha {
			fail("Unexpected upload result", fmt.Sprintf("the gateway computed sha256 %s, the provider %s", up.SHA256, sha))
			return
		}
	}
	if latest, err := r.client.GetFunction(ctx, name); err != nil {
		fail("Cannot read function "+name, apiMessage(err))
		return
	} else if !sameTraffic(latest.Spec.Traffic, wanted) {
		split := spec
		split.Traffic = wanted
		// the build of the new code moves the status (and the version) on meanwhile:
		// a 412 from that alone is retried, a spec changed by someone else is not
		read := lastRead{etag: latest.ETag(), spec: specDigest(latest), traffic: latest.Spec.Traffic}
		if _, _, err := r.putIfUnchanged(ctx, name, split, read); err != nil {
			fail("Cannot set the traffic split of function "+name, apiMessage(err))
			return
		}
	}
	build := time.Duration(plan.BuildTimeoutSec.ValueInt64()) * time.Second
	wait := time.Duration(plan.WaitTimeoutSec.ValueInt64()) * time.Second
	f, warning, err := waitReady(ctx, r.client, name, sha, build, wait)
	if err != nil {
		fail("Function "+name+" did not become Ready", err.Error())
		return
	}
	if warning != "" {
		diags.AddWarning("Function "+name+" is not Ready yet", warning)
	}
	diags.Append(applyRemote(ctx, plan, f)...)
	diags.Append(state.Set(ctx, plan)...)
	diags.Append(rememberETag(ctx, private, f)...)
}

// apiMessage is an error's text for a diagnostic: the API's own message first.
func apiMessage(err error) string {
	return err.Error()
}

// pollInterval is how often waitReady asks for the status; tests may shorten it.
var pollInterval = 500 * time.Millisecond

// waitReady polls the function until it is Ready with the expected code. Validating (held
// for provider review) ends the wait with a warning: only a provider admin can move it on.
func waitReady(ctx context.Context, c *Client, name, sha string, buildTimeout, waitTimeout time.Duration) (*Function, string, error) {
	start := time.Now()
	var buildingSince time.Time
	interval := pollInterval
	for {
		f, err := c.GetFunction(ctx, name)
		if err != nil {
			return nil, "", err
		}
		codeOK := sha == "" || (f.Spec.Code != nil && f.Spec.Code.SHA256 == sha)
		switch f.Status.Phase {
		case "Ready":
			if codeOK {
				return f, "", nil
			}
		case "Failed":
			if codeOK {
				return f, "", fmt.Errorf("phase Failed: %s", f.Status.Message)
			}
		case "Rejected":
			report := Report{}
			if len(f.Status.Validation) > 0 {
				_ = jsonUnmarshal(f.Status.Validation, &report)
			}
			return f, "", fmt.Errorf("phase Rejected: %s\n%s", f.Status.Message, FormatFindings(report))
		case "Validating":
			if codeOK {
				return f, fmt.Sprintf("The upload is held for provider review (verdict %q): %s. "+
					"It becomes Ready once a provider admin approves it; run apply again to refresh.",
					f.Status.Verdict(), f.Status.Message), nil
			}
		case "Building":
			if buildingSince.IsZero() {
				buildingSince = time.Now()
			}
			if time.Since(buildingSince) > buildTimeout {
				return f, "", fmt.Errorf("still Building after build_timeout_sec (%s)", buildTimeout)
			}
		}
		if time.Since(start) > waitTimeout {
			return f, "", fmt.Errorf("still %s after wait_timeout_sec (%s): %s", f.Status.Phase, waitTimeout, f.Status.Message)
		}
		select {
		case <-ctx.Done():
			return f, "", ctx.Err()
		case <-time.After(interval):
		}
		if interval < 3*time.Second {
			interval = interval * 3 / 2
		}
	}
}

func (r *functionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state functionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f, err := r.client.GetFunction(ctx, state.Name.ValueString())
	if IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read function "+state.Name.ValueString(), apiMessage(err))
		return
	}
	resp.Diagnostics.Append(applyRemote(ctx, &state, f)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(rememberETag(ctx, resp.Private, f)...)
}

func (r *functionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state functionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.Name.ValueString()
	if err := r.client.DeleteFunction(ctx, name); err != nil && !IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot delete function "+name, apiMessage(err))
	}
}

// ImportState takes the function's name. source_dir / zip_file are not known to the
// gateway: the first plan after an import compares the configured code's sha256 with
// the uploaded one and shows an update only if they differ.
func (r *functionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("build_timeout_sec"), int64(defaultBuildTimeoutSec))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_timeout_sec"), int64(defaultWaitTimeoutSec))...)
}
