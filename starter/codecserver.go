package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/joinery/joinery/providers/temporal"
	"github.com/joinery/joinery/providers/temporal/codec"
	"github.com/spf13/cobra"
)

// DefaultCodecServerAddr is where `starter codec-server` listens unless
// told otherwise: loopback, so only this machine can ask it to decrypt.
const DefaultCodecServerAddr = "127.0.0.1:8235"

func newCodecServerCommand() *cobra.Command {
	var (
		addr    string
		origins []string
		keyFile string
		pseudo  string
	)
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the payload codec endpoint so the Temporal Web UI can show encrypted payloads",
		Long: `codec-server decrypts (POST /decode) and encrypts (POST /encode) Temporal payloads
with the payload encryption keyring, speaking the protocol of the Temporal Web UI's
"codec endpoint" and of ` + "`temporal --codec-endpoint`" + `. In the Web UI, open the
settings (Data Encoder) and set the codec endpoint to http://<--addr> (default
http://` + DefaultCodecServerAddr + `); the browser then sends payloads there, never to
the Temporal server, and shows them decrypted to whoever holds the key.

It listens on loopback unless --addr says otherwise, and answers browsers only from the
--ui-origin origins (the local Web UI by default). Anyone who can reach it can decrypt:
run it where you read the UI, not next to the server.

--pseudonym NAME prints the pseudonym that stands for a node name or instance id in
workflow ids (disrupt/<reason>/<pseudonym>, interruption/<pseudonym>/<kind>) and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sec := temporal.FromEnv(os.Getenv)
			if keyFile != "" {
				sec.CodecKeyFile = keyFile
			}
			kr, err := temporal.RequireKeyring(sec)
			if err != nil {
				return err
			}
			if pseudo != "" {
				fmt.Println(kr.Pseudonym(pseudo))
				return nil
			}
			return serveCodec(cmd.Context(), addr, kr, origins, os.Stderr)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", DefaultCodecServerAddr, "listen address (loopback by default; another host exposes decryption to the network)")
	cmd.Flags().StringSliceVar(&origins, "ui-origin", codec.DefaultUIOrigins, "Web UI origins browsers may call from (repeatable)")
	cmd.Flags().StringVar(&keyFile, "codec-key-file", os.Getenv(temporal.EnvCodecKeyFile), "keyring file (or env "+temporal.EnvCodecKeyFile+", or the keyring JSON in "+temporal.EnvCodecKeys+")")
	cmd.Flags().StringVar(&pseudo, "pseudonym", "", "print the pseudonym of this node name or instance id and exit")
	return cmd
}

// serveCodec serves the codec endpoint on addr until ctx ends.
func serveCodec(ctx context.Context, addr string, kr *codec.Keyring, origins []string, progress *os.File) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("codec server: %w (pass another --addr)", err)
	}
	srv := &http.Server{Handler: codec.NewHTTPHandler(kr, origins), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(progress, "codec endpoint: http://%s (keys %v, active %s); set it as the Web UI's codec endpoint\n",
		ln.Addr(), kr.KeyIDs(), kr.ActiveKeyID())
	if !temporal.IsLoopback(ln.Addr().String()) {
		fmt.Fprintf(progress, "warning: %s is not loopback: anyone who reaches it can decrypt payloads\n", ln.Addr())
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
