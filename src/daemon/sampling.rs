//! Servers' sampling requests answered from the daemon's consoles: `sample` has the daemon's
//! agent model write an answer (nothing goes back to the server yet: the console shows it to
//! the operator, who may edit it), and `answer_sampling` sends the operator's answer or
//! rejection back, the first console's winning (every console is told: `sampling_answered`).
//! The model runs in the daemon, beside its servers and with its config's key, as the
//! console's own model answers its own runtime's requests, on the endpoint the daemon's
//! sessions use (`models.rs`: started once per profile, kept until a request to it fails).

use std::sync::Arc;

use serde_json::{json, Value};

use super::hub::{Hub, Refusal, Who};
use super::wire::{code, notification};
use crate::agent::sampling::sample as ask_model;

type Reply = Result<Value, (i64, String)>;

fn id_of(params: &Value) -> Result<u64, (i64, String)> {
    params.get("id").and_then(Value::as_u64).ok_or_else(|| {
        (
            code::INVALID_PARAMS,
            "`id` is the sampling request's id, a number".to_string(),
        )
    })
}

/// `sample {id, model?}`: the daemon's model (profile `model`, the default one without) on
/// the request's messages: `{text, model, ended}` (`ended`: how the answer ended, `stop`, `length`, …).
pub async fn sample(hub: Arc<Hub>, params: Value) -> Reply {
    let request = hub
        .samplings
        .get(id_of(&params)?)
        .map_err(|refusal| (refusal.code, refusal.message))?;
    let failed = |why: String| (code::MODEL_FAILED, why);
    let Some(agent) = &hub.config.agent else {
        return Err(failed("the daemon's config has no agent: section".into()));
    };
    let profile = agent
        .profile(params.get("model").and_then(Value::as_str))
        .map_err(|why| (code::NOT_FOUND, why))?;
    let said = |e: crate::agent::ModelError| {
        failed(format!(
            "{}: {} (hint: {})",
            e.class.as_str(),
            e.message,
            e.hint
        ))
    };
    let started = hub.models.get(profile).await.map_err(said)?;
    let client = started.client(&hub.runtime, profile);
    let sampled = tokio::select! {
        // Answered by another console meanwhile, or withdrawn: nobody waits for this answer.
        () = request.closed() => {
            let why = "the sampling request no longer waits (another console answered it, or its server withdrew it)";
            return Err((code::NO_SUCH_QUESTION, why.into()))
        }
        sampled = ask_model(&*client, &request.ask) => sampled,
    };
    let sampled = match sampled {
        Ok(sampled) => sampled,
        Err(e) => {
            if started.gone(&e) {
                // The next request starts the endpoint again.
                hub.models.forget(&profile.name, &started).await;
            }
            return Err(said(e));
        }
    };
    Ok(json!({
        "text": sampled.text,
        "model": sampled.model,
        "ended": sampled.finish_reason.as_ref().map(|r| r.as_str()),
    }))
}

/// `answer_sampling {id, action: "answer", text, model, stop?, edited?}` or
/// `{id, action: "reject", reason?}`: the first answer goes to the server and is said to every
/// console (`sampling_answered`).
pub fn answer(hub: &Hub, params: &Value, who: &Who) -> Reply {
    let id = id_of(params)?;
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    let action = text("action").unwrap_or_default();
    let answered = match action {
        "answer" => {
            let (Some(answer), Some(model)) = (text("text"), text("model")) else {
                return Err((
                    code::INVALID_PARAMS,
                    "an answer has its `text` and the `model` that wrote it".into(),
                ));
            };
            hub.samplings.answer(id, who, |request| {
                let edited = params.get("edited").and_then(Value::as_bool) == Some(true);
                let stop = text("stop").map(str::to_string);
                request.answer(answer.to_string(), model.to_string(), stop, edited);
                Ok(())
            })
        }
        "reject" => hub.samplings.answer(id, who, |request| {
            let why = text("reason").unwrap_or("rejected by the operator");
            request.reject(format!("{why} ({})", who.text()));
            Ok(())
        }),
        _ => Err(Refusal {
            code: code::INVALID_PARAMS,
            message: "`action` is answer or reject".into(),
        }),
    };
    answered.map_err(|refusal| (refusal.code, refusal.message))?;
    let told = json!({"id": id, "action": action, "by": who.json()});
    hub.broadcast(notification("sampling_answered", told.clone()));
    Ok(told)
}
