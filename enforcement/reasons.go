package enforcement

// Reserved host_error reasons (spec §11). Only the host synthesizes them.
const (
	ReasonContextInvalid           = "host_error:context_invalid"
	ReasonInterceptorFailed        = "host_error:interceptor_failed"
	ReasonInterceptorTimeout       = "host_error:interceptor_timeout"
	ReasonVerdictInvalid           = "host_error:verdict_invalid"
	ReasonTransformInvalid         = "host_error:transform_invalid"
	ReasonTransformTargetForbidden = "host_error:transform_target_forbidden"
	ReasonTransformConflict        = "host_error:transform_conflict"
	ReasonCompositionDisagreement  = "host_error:composition_disagreement"
	ReasonApprovalResolverFailed   = "host_error:approval_resolver_failed"
	ReasonApprovalUnresolved       = "host_error:approval_unresolved"
	ReasonApprovalIdentityMismatch = "host_error:approval_identity_mismatch"
	ReasonAdapterUnsupported       = "host_error:adapter_unsupported"
	ReasonNoInterceptor            = "host_error:no_interceptor"
	ReasonStreamingUnsupported     = "host_error:streaming_unsupported"
)

// ReservedReasons returns the §11 inventory in spec order.
func ReservedReasons() []string {
	return []string{
		ReasonContextInvalid, ReasonInterceptorFailed, ReasonInterceptorTimeout,
		ReasonVerdictInvalid, ReasonTransformInvalid, ReasonTransformTargetForbidden,
		ReasonTransformConflict, ReasonCompositionDisagreement, ReasonApprovalResolverFailed,
		ReasonApprovalUnresolved, ReasonApprovalIdentityMismatch, ReasonAdapterUnsupported,
		ReasonStreamingUnsupported, ReasonNoInterceptor,
	}
}

// hostErrorPrefix marks reasons only a host may synthesize.
const hostErrorPrefix = "host_error:"

// IsHostError reports whether reason is a reserved host_error:* reason.
func IsHostError(reason string) bool {
	return len(reason) >= len(hostErrorPrefix) && reason[:len(hostErrorPrefix)] == hostErrorPrefix
}
