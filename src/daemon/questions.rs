//! What the daemon's servers ask its consoles to answer: questions (`elicitation/create`, a
//! form or a URL) and sampling requests (`sampling/createMessage`). Each is kept until one
//! console answers it (the first answer wins; every console is told who gave it), its server
//! withdraws it (every console is told), or the daemon stops (an unanswered one is declined).
//! With no console attached one is declined at once: nobody is there to answer it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Map, Value};

use super::hub::{Refusal, Who};
use super::wire::code;
use crate::runtime::{ElicitationRequest, SamplingRequest};

/// Most answered requests remembered, to tell a late answer who came first.
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

/// A request a server waits on while the daemon's consoles are asked.
pub trait Asked: Clone {
    /// What the consoles call it ("question", "sampling request").
    const NOUN: &'static str;
    fn id(&self) -> u64;
    fn server(&self) -> &str;
    /// Whether its server still waits for the answer.
    fn is_open(&self) -> bool;
    /// Resolves once its server waits no more (answered, or withdrawn).
    fn closed(&self) -> impl std::future::Future<Output = ()> + Send + '_;
    /// Answered for the consoles, that none of them will: `why`.
    fn give_up(&self, why: &str);
}

impl Asked for ElicitationRequest {
    const NOUN: &'static str = "question";
    fn id(&self) -> u64 {
        self.id
    }
    fn server(&self) -> &str {
        &self.server
    }
    fn is_open(&self) -> bool {
        ElicitationRequest::is_open(self)
    }
    fn closed(&self) -> impl std::future::Future<Output = ()> + Send + '_ {
        ElicitationRequest::closed(self)
    }
    fn give_up(&self, why: &str) {
        self.decline(why);
    }
}

impl Asked for SamplingRequest {
    const NOUN: &'static str = "sampling request";
    fn id(&self) -> u64 {
        self.id
    }
    fn server(&self) -> &str {
        &self.server
    }
    fn is_open(&self) -> bool {
        SamplingRequest::is_open(self)
    }
    fn closed(&self) -> impl std::future::Future<Output = ()> + Send + '_ {
        SamplingRequest::closed(self)
    }
    fn give_up(&self, why: &str) {
        self.reject(why);
    }
}

/// A waiting request, and its `…_requested` event line.
struct Waiting<R> {
    request: R,
    line: Arc<str>,
}

struct State<R> {
    waiting: HashMap<u64, Waiting<R>>,
    answered: VecDeque<(u64, Who)>,
}

/// The requests of one kind that wait for the daemon's consoles.
pub struct Asks<R> {
    state: Mutex<State<R>>,
}

/// The servers' questions.
pub type Questions = Asks<ElicitationRequest>;
/// The servers' sampling requests.
pub type Samplings = Asks<SamplingRequest>;

impl<R> Default for Asks<R> {
    fn default() -> Self {
        Asks {
            state: Mutex::new(State {
                waiting: HashMap::new(),
                answered: VecDeque::new(),
            }),
        }
    }
}

impl<R: Asked> Asks<R> {
    fn state(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `request` (its event line `line`) until a console answers it.
    pub fn keep(&self, request: R, line: String) {
        let waiting = Waiting {
            request,
            line: line.into(),
        };
        self.state().waiting.insert(waiting.request.id(), waiting);
    }

    /// The requests waiting, as their event lines, oldest first: for a console attaching.
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

    /// Request `id` while it waits, or why a console cannot have it (answered first by
    /// another console, or not waiting).
    pub fn get(&self, id: u64) -> Result<R, Refusal> {
        let state = self.state();
        match state.waiting.get(&id).filter(|w| w.request.is_open()) {
            Some(waiting) => Ok(waiting.request.clone()),
            None => Err(Self::not_waiting(&state, id)),
        }
    }

    fn not_waiting(state: &State<R>, id: u64) -> Refusal {
        let noun = R::NOUN;
        match state.answered.iter().find(|(a, _)| *a == id) {
            Some((_, first)) => Refusal {
                code: code::ALREADY_ANSWERED,
                message: format!("{noun} {id} was already answered by {}", first.text()),
            },
            None => Refusal {
                code: code::NO_SUCH_QUESTION,
                message: format!("no {noun} {id} is waiting (its server may have withdrawn it)"),
            },
        }
    }

    /// A console's answer to request `id`, given by `give` (which may refuse it: the request
    /// then goes on waiting): the first one goes to the server; a later one is refused,
    /// naming who came first.
    pub fn answer(
        &self,
        id: u64,
        who: &Who,
        give: impl FnOnce(&R) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        let mut state = self.state();
        // One its server withdrew is not answered (its watch takes it out and says so).
        let open = state.waiting.get(&id).is_some_and(|w| w.request.is_open());
        let Some(waiting) = open.then(|| state.waiting.remove(&id)).flatten() else {
            return Err(Self::not_waiting(&state, id));
        };
        if let Err(refusal) = give(&waiting.request) {
            state.waiting.insert(id, waiting);
            return Err(refusal);
        }
        if state.answered.len() == ANSWERED {
            state.answered.pop_front();
        }
        state.answered.push_back((id, who.clone()));
        Ok(())
    }

    /// Request `id`'s server withdrew it (or gave up waiting): true if it was still waiting
    /// for a console, which is then told.
    pub fn withdrawn(&self, id: u64) -> bool {
        self.state().waiting.remove(&id).is_some()
    }

    /// Answers every waiting request for the consoles: the daemon is stopping.
    pub fn give_up_all(&self) {
        let waiting: Vec<Waiting<R>> = self.state().waiting.drain().map(|(_, w)| w).collect();
        for asked in waiting {
            asked.request.give_up("the daemon is stopping");
        }
    }
}

impl Questions {
    /// A console's answer to question `id`: content a form's fields refuse is refused and
    /// the question goes on waiting. Returns what to tell every console
    /// (`elicitation_answered`).
    pub fn answer_question(&self, id: u64, answer: Answer, who: &Who) -> Result<Value, Refusal> {
        self.answer(id, who, |request| {
            match &answer {
                Answer::Accept(content) => {
                    request
                        .accept(content.clone())
                        .map_err(|problems| Refusal {
                            code: code::INVALID_PARAMS,
                            message: format!("the form refuses it: {}", problems.join("; ")),
                        })?
                }
                Answer::Decline => request.decline(format!("declined by {}", who.text())),
                Answer::Cancel => request.cancel(),
            }
            Ok(())
        })?;
        Ok(json!({"id": id, "action": answer.action(), "by": who.json()}))
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
            .answer_question(id, Answer::Accept(Map::new()), &who("a"))
            .unwrap_err();
        assert_eq!(refused.code, code::INVALID_PARAMS);
        assert!(refused.message.contains("title"), "{}", refused.message);
        let content = json!({"title": "t"}).as_object().unwrap().clone();
        let told = questions
            .answer_question(id, Answer::Accept(content.clone()), &who("b"))
            .unwrap();
        assert_eq!(told["action"], "accept");
        assert_eq!(told["by"]["name"], "b");
        assert_eq!(
            answer.await.unwrap(),
            ElicitationAnswer::Accept(Some(content))
        );
        let late = questions
            .answer_question(id, Answer::Decline, &who("c"))
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
        let refused = questions
            .answer_question(id, Answer::Cancel, &who("a"))
            .unwrap_err();
        assert_eq!(refused.code, code::NO_SUCH_QUESTION);
        // Its watch takes it out once: the consoles are told once.
        assert!(questions.withdrawn(id));
        assert!(!questions.withdrawn(id));
        let (request, answer) = form();
        questions.keep(request, "line".into());
        questions.give_up_all();
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
