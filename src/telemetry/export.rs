//! Where spans and metrics leave the process: the OpenTelemetry SDK's batching span processor
//! and periodic metric reader, each exporting OTLP/HTTP protobuf through our reqwest client
//! (the SDK's export threads hand each request to the tokio runtime that made them).

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;

use crate::config::TelemetryConfig;

/// How long one export may take (connect, send, answer).
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// The two providers of one `telemetry:` section.
pub struct Providers {
    pub traces: SdkTracerProvider,
    pub metrics: SdkMeterProvider,
}

/// The providers for `config`, exporting to its `otlp_endpoint` (`…/v1/traces`,
/// `…/v1/metrics`); an error says what could not be built. Call inside a tokio runtime: the
/// exports run on it.
pub fn providers(config: &TelemetryConfig, endpoint: &str) -> Result<Providers, String> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| "telemetry needs the tokio runtime".to_string())?;
    crate::net::install_tls_provider();
    let client = reqwest::Client::builder()
        .timeout(EXPORT_TIMEOUT)
        .dns_resolver(std::sync::Arc::new(crate::net::Resolver))
        .build()
        .map_err(|e| e.to_string())?;
    let http = Exporter { client, runtime };
    let base = endpoint.trim_end_matches('/');
    let headers: HashMap<String, String> = config.headers.clone().into_iter().collect();
    let resource = Resource::builder()
        .with_service_name("aimon-console")
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http.clone())
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .with_headers(headers.clone())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| format!("the span exporter: {e}"))?;
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(http)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/metrics"))
        .with_headers(headers)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| format!("the metric exporter: {e}"))?;
    Ok(Providers {
        traces: SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build(),
        metrics: SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build(),
    })
}

/// opentelemetry-http's client over reqwest: the SDK calls it from its own export threads
/// (outside any runtime), so each request runs as a task of `runtime` and is awaited through
/// a channel.
#[derive(Debug, Clone)]
struct Exporter {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for Exporter {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request)?;
        let client = self.client.clone();
        let (tx, rx) = futures::channel::oneshot::channel();
        self.runtime.spawn(async move {
            let answer = async {
                let response = client.execute(request).await?;
                let (status, headers) = (response.status(), response.headers().clone());
                Ok::<_, reqwest::Error>((status, headers, response.bytes().await?))
            }
            .await;
            let _ = tx.send(answer);
        });
        let (status, headers, body) = rx
            .await
            .map_err(|_| "the runtime stopped before the export ended")?
            .inspect_err(|e| tracing::warn!(error = %e, "telemetry export failed"))?;
        if !status.is_success() {
            tracing::warn!(%status, "the telemetry collector refused an export");
        }
        let mut response = http::Response::new(body);
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        Ok(response)
    }
}
