package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * One version of a catalog table, as the delegate resolved it when Spark loaded it: its schema,
 * its properties, and the opaque {@code scan} description the delegate plans reads from.
 * Reads and writes run through the registered {@code tsfile} Python data source.
 */
public class TsFileTable implements SupportsRead, SupportsWrite {
  private final String catalog;
  private final Identifier ident;
  private final JsonNode description;
  private final StructType schema;

  TsFileTable(String catalog, Identifier ident, JsonNode description) {
    this.catalog = catalog;
    this.ident = ident;
    this.description = description;
    this.schema = (StructType) DataType.fromJson(description.get("schema").asText());
  }

  @Override
  public String name() {
    return catalog + "." + String.join(".", ident.namespace()) + "." + ident.name();
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return Client.toMap(description.get("properties"));
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_BY_FILTER,
        TableCapability.MICRO_BATCH_READ,
        TableCapability.STREAMING_WRITE);
  }

  /** What the delegate needs back to plan a scan of this version (opaque here). */
  JsonNode scanDescription() {
    return description.get("scan");
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new TsFileScanBuilder(this, options);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new TsFileWriteBuilder(
        schema, Client.toMap(description.get("write_options")), info, scanDescription());
  }
}
