//! Printing a client object shows no secret (issue 35): every public object printed with
//! `{:?}` and `{:#?}`, with a fake secret in the environment and two TCP tokens (one given, one
//! from POSTCOMPACT_TOKEN), shows neither the tokens nor any value of the environment, and does
//! show the address and the session and agent ids. The clients connect to a TCP listener that
//! never answers (connecting is all they do).

use postcompact_client::client::BearerToken;
use postcompact_client::{Client, Options};

const SECRET: &str = "sk-env-secret-3f9a1c";
const GIVEN_TOKEN: &str = "tcp-token-given-7b2e";
const ENV_TOKEN: &str = "tcp-token-from-env-91d4";

fn check(what: &str, printed: &[String], shown: &[&str]) {
    let env: Vec<String> = std::env::vars()
        .filter(|(k, v)| v.len() >= 8 && k != "PWD" && k != "OLDPWD")
        .map(|(_, v)| v)
        .collect();
    for text in printed {
        for secret in [SECRET, GIVEN_TOKEN, ENV_TOKEN] {
            assert!(!text.contains(secret), "{what} prints a secret: {text}");
        }
        let leaked: Vec<&String> = env.iter().filter(|v| text.contains(v.as_str())).collect();
        assert!(
            leaked.is_empty(),
            "{what} prints the environment ({leaked:?}): {text}"
        );
    }
    for field in shown {
        assert!(
            printed[0].contains(field),
            "{what} does not show {field}: {}",
            printed[0]
        );
    }
}

fn printed(x: &dyn std::fmt::Debug) -> Vec<String> {
    vec![format!("{x:?}"), format!("{x:#?}")]
}

#[tokio::test]
async fn printing_shows_no_secret() {
    // The only test of this binary: the environment is its own.
    std::env::set_var("SECRET_TOKEN", SECRET);
    std::env::set_var("POSTCOMPACT_TOKEN", ENV_TOKEN);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let options = Options::default().address(&address).token(GIVEN_TOKEN);
    let given = Client::connect_with(options.clone())
        .await
        .expect("connect");
    let from_env = Client::connect_with(Options::default().address(&address))
        .await
        .expect("connect");
    let session = given.session("ses-print-1").agent("agent-print-a");
    let bearer = BearerToken::new(Some(GIVEN_TOKEN)).expect("token");
    check("options", &printed(&options), &[&address, "<hidden>"]);
    check("bearer token", &printed(&bearer), &["<hidden>"]);
    check("client (token given)", &printed(&given), &[&address]);
    check(
        "client (token from the environment)",
        &printed(&from_env),
        &[&address],
    );
    check(
        "session",
        &printed(&session),
        &["ses-print-1", "agent-print-a", &address],
    );
    check("address", &printed(&given.address()), &[&address]);
    drop(listener);
}
