package sshkey

import (
	"bytes"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestGenerateMakesAMatchingUsablePair(t *testing.T) {
	priv, pub, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(priv)
	if err != nil {
		t.Fatalf("private key does not parse: %v", err)
	}
	if got := signer.PublicKey().Type(); got != ssh.KeyAlgoED25519 {
		t.Errorf("key type = %s, want %s", got, ssh.KeyAlgoED25519)
	}
	authorized, _, _, _, err := ssh.ParseAuthorizedKey(pub)
	if err != nil {
		t.Fatalf("public key is not an authorized_keys line: %v", err)
	}
	if !bytes.Equal(authorized.Marshal(), signer.PublicKey().Marshal()) {
		t.Error("public key does not belong to the private key")
	}
	priv2, _, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(priv, priv2) {
		t.Error("two jobs got the same key")
	}
}
