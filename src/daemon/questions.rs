//! Servers' questions (`elicitation/create`, a form or a URL) waiting for a console's answer:
//! kept until one console answers (the first answer wins; every console is told who gave it),
//! the server withdraws the question (every console is told), or the daemon stops (an
//! unanswered question is declined).
//! With no console attached a question is declined at once: nobody is there to answer it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Map, Value};

use super::hub::{Refusal, Who};
use super::wire::code;
use crate::runtime::ElicitationRequest;

/// Most answered questions remembered, to tell a late answer who came first.
const ANSWERED: usize = 256;

/// A console's answer to a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Accepted: a form's content (checked against its fields); nothing for a URL.
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

impl Answer {
    /// `answer_elicitation`'s `action` and `content`.
    pub fn from_params(params: &Value) -> Result<Answer, String> {
        match params.get("action").and_then(Value::as_str) {
            Some("accept") => match params.get("content") {
                None | Some(Value::Null) => Ok(Answer::Accept(Map::new())),
                Some(Value::Object(content)) => Ok(Answer::Accept(content.clone())),
                Some(_) => Err("`content` is the form's fields, an object".into()),
            },
            Some("decline") => Ok(Answer::Decline),
            Some("cancel") => Ok(Answer::Cancel),
            _ => Err("`action` is accept, decline or cancel".into()),
        }
    }

    pub fn action(&self) -> &'static str {
        match self {
            Answer::Accept(_) => "accept",
            Answer::Decline => "decline",
            Answer::Cancel => "cancel",
        }
    }
}

/// A waiting question: the request, and its `elicitation_requested` line.
struct Waiting {
    request: ElicitationRequest,
    line: Arc<str>,
}

#[derive(Default)]
struct State {
    waiting: HashMap<u64, Waiting>,
    answered: VecDeque<(u64, Who)>,
}

/// The questions of a daemon's servers that wait for its consoles.
#[derive(Default)]
pub struct Questions {
    state: Mutex<State>,
}

impl Questions {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `request` (its event line `line`) until a console answers it.
    pub fn keep(&self, request: ElicitationRequest, line: String) {
        let waiting = Waiting {
            request,
            line: line.into(),
        };
        self.state().waiting.insert(waiting.request.id, waiting);
    }

    /// The questions waiting, as their event lines, oldest first: for a console attaching.
    pub fn waiting(&self) -> Vec<Arc<str>> {
        let state = self.state();
        // One its server withdrew waits no more (its watch takes it out and says so).
        let mut waiting: Vec<(u64, Arc<str>)> = state
            .waiting
            .iter()
            .filter(|(_, w)| w.request.is_open())
            .map(|(id, w)| (*id, w.line.clone()))
            .collect();
        waiting.sort_by_key(|(id, _)| *id);
        waiting.into_iter().map(|(_, line)| line).collect()
    }

    /// A console's answer to question `id`: the first one goes to the server; a later one is
    /// refused, naming who came first. Content a form's fields refuse is refused and the
    /// question goes on waiting. Returns what to tell every console (`elicitation_answered`).
    pub fn answer(&self, id: u64, answer: Answer, who: &Who) -> Result<Value, Refusal> {
        let mut state = self.state();
        // One its server withdrew is not answered (its watch takes it out and says so).
        let open = state.waiting.get(&id).is_some_and(|w| w.request.is_open());
        let Some(waiting) = open.then(|| state.waiting.remove(&id)).flatten() else {
            let first = state.answered.iter().find(|(a, _)| *a == id);
            return Err(match first {
                Some((_, first)) => Refusal {
                    code: code::ALREADY_ANSWERED,
                    message: format!("question {id} was already answered by {}", first.text()),
                },
                None => Refusal {
                    code: code::NO_SUCH_QUESTION,
                    message: format!(
                        "no question {id} is waiting (its server may have withdrawn it)"
                    ),
                },
            });
        };
        let request = &waiting.request;
        match &answer {
            Answer::Accept(content) => {
                if let Err(problems) = request.accept(content.clone()) {
                    state.waiting.insert(id, waiting);
                    return Err(Refusal {
                        code: code::INVALID_PARAMS,
                        message: format!("the form refuses it: {}", problems.join("; ")),
                    });
                }
            }
            Answer::Decline => request.decline(format!("declined by {}", who.text())),
            Answer::Cancel => request.cancel(),
        }
        if state.answered.len() == ANSWERED {
            state.answered.pop_front();
        }
        state.answered.push_back((id, who.clone()));
        Ok(json!({"id": id, "action": answer.action(), "by": who.json()}))
    }

    /// Question `id`'s server withdrew it (or gave up waiting): true if it was still waiting
    /// for a console, which is then told (`elicitation_withdrawn`).
    pub fn withdrawn(&self, id: u64) -> bool {
        self.state().waiting.remove(&id).is_some()
    }

    /// Declines every waiting question: the daemon is stopping.
    pub fn decline_all(&self) {
        let waiting: Vec<Waiting> = self.state().waiting.drain().map(|(_, w)| w).collect();
        for question in waiting {
            question.request.decline("the daemon is stopping");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::ElicitationAnswer;

    fn who(name: &str) -> Who {
        Who {
            name: name.into(),
            user: "u".into(),
            host: "h".into(),
            pid: Some(7),
        }
    }

    fn form() -> (
        ElicitationRequest,
        tokio::sync::oneshot::Receiver<ElicitationAnswer>,
    ) {
        let schema = json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]});
        ElicitationRequest::form("notes", "Title?".into(), schema).unwrap()
    }

    #[tokio::test]
    async fn the_first_answer_goes_to_the_server_and_a_later_one_is_told_who_came_first() {
        let questions = Questions::default();
        let (request, answer) = form();
        let id = request.id;
        questions.keep(request, "line".into());
        assert_eq!(questions.waiting().len(), 1);
        // Content the form refuses: refused, and the question still waits.
        let refused = questions
            .answer(id, Answer::Accept(Map::new()), &who("a"))
            .unwrap_err();
        assert_eq!(refused.code, code::INVALID_PARAMS);
        assert!(refused.message.contains("title"), "{}", refused.message);
        let content = json!({"title": "t"}).as_object().unwrap().clone();
        let told = questions
            .answer(id, Answer::Accept(content.clone()), &who("b"))
            .unwrap();
        assert_eq!(told["action"], "accept");
        assert_eq!(told["by"]["name"], "b");
        assert_eq!(
            answer.await.unwrap(),
            ElicitationAnswer::Accept(Some(content))
        );
        let late = questions
            .answer(id, Answer::Decline, &who("c"))
            .unwrap_err();
        assert_eq!(late.code, code::ALREADY_ANSWERED);
        assert!(late.message.contains("b u@h (pid 7)"), "{}", late.message);
        assert!(questions.waiting().is_empty());
    }

    #[tokio::test]
    async fn a_withdrawn_question_waits_no_more_and_stopping_declines_the_rest() {
        let questions = Questions::default();
        let (withdrawn, gone) = form();
        let id = withdrawn.id;
        questions.keep(withdrawn, "line".into());
        drop(gone);
        assert!(questions.waiting().is_empty());
        let refused = questions.answer(id, Answer::Cancel, &who("a")).unwrap_err();
        assert_eq!(refused.code, code::NO_SUCH_QUESTION);
        // Its watch takes it out once: the consoles are told once.
        assert!(questions.withdrawn(id));
        assert!(!questions.withdrawn(id));
        let (request, answer) = form();
        questions.keep(request, "line".into());
        questions.decline_all();
        assert_eq!(
            answer.await.unwrap(),
            ElicitationAnswer::Decline("the daemon is stopping".into())
        );
    }

    #[test]
    fn an_answer_is_read_from_its_params() {
        let accept = Answer::from_params(&json!({"action": "accept", "content": {"a": 1}}));
        assert_eq!(accept.unwrap().action(), "accept");
        assert_eq!(
            Answer::from_params(&json!({"action": "decline"})),
            Ok(Answer::Decline)
        );
        assert!(Answer::from_params(&json!({"action": "accept", "content": 3})).is_err());
        assert!(Answer::from_params(&json!({"action": "maybe"})).is_err());
    }
}
