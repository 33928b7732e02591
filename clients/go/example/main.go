// Command example is the README's example: IDs from leased blocks, and Snowflake IDs on a leased worker ID.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"ticketd.dev/ticketd"
)

func main() {
	url := "http://localhost:8080"
	if given := os.Getenv("TICKETD_URL"); given != "" {
		url = given
	}
	ctx := context.Background()

	client, err := ticketd.NewClient(ticketd.Options{URLs: []string{url}, Sequence: "default"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	id, err := client.Next(ctx) // from a leased block: no request per ID
	if err != nil {
		log.Fatal(err)
	}
	batch, err := client.NextBatch(ctx, 3)
	if err != nil {
		log.Fatal(err)
	}

	snowflake, err := ticketd.NewSnowflake(ticketd.SnowflakeOptions{URLs: []string{url}, Pool: "web"})
	if err != nil {
		log.Fatal(err)
	}
	defer snowflake.Close() // releases the worker ID
	flake, err := snowflake.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, batch, flake, snowflake.Decompose(flake))
}
